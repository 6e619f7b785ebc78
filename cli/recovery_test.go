package cli

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestRecoveryScripts runs testdata/recovery/*.txtar: recovery mounts of damaged gocryptfs
// fixtures and path mapping through the daemon, with the mount scripts' daemon per script and
// the fixture commands of the offline scripts.
func TestRecoveryScripts(t *testing.T) {
	fixtures, err := filepath.Abs(fixturesDir)
	if err != nil {
		t.Fatal(err)
	}
	p := mountScriptParams(t, "testdata/recovery", func(env *testscript.Env) {
		env.Setenv("FIXTURES", fixtures)
	})
	p.Cmds["untar"] = cmdUntar
	p.Cmds["flipbyte"] = cmdFlipByte
	p.Cmds["sha256"] = cmdSHA256
	testscript.Run(t, p)
}
