package cli

import (
	"fmt"

	"github.com/vaultui/vaultui/app"
)

var versionCommand = &command{
	name:    "version",
	group:   groupOther,
	summary: "Print vaultui's version, and Go's, go-fuse's and the AEGIS code's in use",
	args:    "",
	help: `Prints what a bug report needs: vaultui's version (stamped at build time
with -ldflags "-X github.com/vaultui/vaultui/internal/buildinfo.Version=VERSION"; a build
without it says so), the Go toolchain and platform it was built for, the
go-fuse version built in, and the code that runs AEGIS on this CPU (assembly
on AES instructions, or the portable constant-time code).`,
	setup: noFlags(func(e *env, args []string) error {
		v := app.Version()
		for _, l := range [][2]string{{"vaultui", v.Vaultui}, {"Go", v.Go}, {"go-fuse", v.GoFuse}, {"AEGIS", v.AEGIS}} {
			fmt.Fprintf(e.stdout, "%-8s %s\n", l[0], l[1])
		}
		return nil
	}),
}
