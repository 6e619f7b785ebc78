package mountmgr

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vaultui/vaultui/crypto"
)

// An AEGIS vault mounted on a CPU without the AES instructions its kernels use gets a notice
// naming the portable code and the speed measured; with them, none. The CPU without them is
// this one with AES turned off (x/sys/cpu honours GODEBUG=cpu.aes=off), in a child process.
func TestSlowCipherNotice(t *testing.T) {
	if os.Getenv("VAULTUI_TEST_NOTICE_CHILD") == "1" {
		os.Stdout.WriteString("NOTICE:" + slowCipherNotice(crypto.AEGIS) + "\n")
		return
	}
	if _, hw := crypto.Implementation(crypto.AEGIS); hw {
		if n := slowCipherNotice(crypto.AEGIS); n != "" {
			t.Errorf("a notice with hardware kernels: %q", n)
		}
	}
	if n := slowCipherNotice(crypto.AESGCM); n != "" {
		t.Errorf("a notice for AES-GCM: %q", n)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSlowCipherNotice$")
	cmd.Env = append(os.Environ(), "VAULTUI_TEST_NOTICE_CHILD=1", "GODEBUG=cpu.aes=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "NOTICE:AEGIS-256X2 runs on its portable, constant time code on this CPU") || !strings.Contains(string(out), "MB/s") {
		t.Errorf("without AES instructions the notice is: %s", out)
	}
}
