package cli

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"

	"github.com/vaultui/vaultui/internal/termsafe"
)

var pathCommand = &command{
	name:     "path",
	anyArgs:  true,
	group:    groupVaults,
	summary:  "Map cipher paths to plaintext paths and back",
	args:     "[--passfile F | --extpass PROGRAM] [-z] decrypt|encrypt VAULT [PATH...]",
	operands: []string{"decrypt|encrypt", "VAULT", "PATH..."},
	help: `"path decrypt" tells which file a cipher path is (a sync tool's error names
cipher paths); "path encrypt" gives the cipher path of a plaintext path, like
gocryptfs-xray -decrypt-paths and -encrypt-paths. Paths are relative to the
cipherdir (decrypt) or the vault's root (encrypt); an absolute path inside the
cipherdir or the mount point works too. Long names (gocryptfs.longname.*),
deterministic and plaintext names map like any other. The last element need
not exist when encrypting; the directories above it must (their IV encrypts
it). Without PATH arguments, paths are read from standard input, one a line
(NUL-separated with -z, which also ends each output path with NUL instead of
a newline).
A mounted vault's paths are mapped by the mount manager, which holds its
keys: no password is asked. Otherwise the password unlocks the vault here.
Results go to standard output one a line, in order; a path that cannot be
mapped is reported on standard error (exit code 1 at the end).

examples:
  vaultui path decrypt work 3Xq...Rw/gocryptfs.longname.Xyz...
  vaultui path encrypt work "Documents/report 2026.odt"
  find /data/work.enc -newer stamp | vaultui path decrypt work`,
	setup: func(fs *flag.FlagSet) runFunc {
		src := passSourceFlags(fs, "read the password from the first line of `FILE` (- for standard input); not asked for a mounted vault")
		nul := fs.Bool("z", false, "paths on standard input and output end with NUL, not newline")
		return func(e *env, args []string) error {
			if len(args) < 2 || args[0] != "decrypt" && args[0] != "encrypt" {
				return e.usage("expected decrypt or encrypt, VAULT and PATHs")
			}
			encrypt := args[0] == "encrypt"
			if _, err := e.resolve(args[1]); err != nil {
				return err // before paths are read
			}
			paths := args[2:]
			var err error
			if len(paths) == 0 {
				if src.file == "-" {
					return e.usage("--passfile - and paths on standard input: give the paths as arguments")
				}
				if paths, err = readPaths(e.stdin, *nul); err != nil {
					return err
				}
			}
			w, _, err := e.openWalker(args[1], src)
			if err != nil {
				return err
			}
			defer w.Close()
			results, err := w.MapPaths(e.ctx, encrypt, paths)
			if err != nil {
				return err
			}
			end := "\n"
			if *nul {
				end = "\x00"
			}
			failed := 0
			for i, r := range results {
				if r.Error != "" {
					failed++
					fmt.Fprintf(e.stderr, "error: %s: %s\n", termsafe.Escape(paths[i]), termsafe.Escape(r.Error))
					continue
				}
				out := r.Path
				if !*nul {
					out = termsafe.Escape(out) // one path a line, and nothing for a terminal to obey
				}
				fmt.Fprint(e.stdout, out+end)
			}
			if failed > 0 {
				return &codeError{fmt.Errorf("path: %d of %d path(s) could not be mapped", failed, len(paths)), exitError}
			}
			return nil
		}
	},
}

// readPaths reads paths from r, one a line or NUL-terminated; empty ones are skipped.
func readPaths(r io.Reader, nul bool) ([]string, error) {
	sep := byte('\n')
	if nul {
		sep = 0
	}
	var out []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes(sep)
		line = bytes.TrimSuffix(line, []byte{sep})
		if !nul {
			line = bytes.TrimSuffix(line, []byte{'\r'})
		}
		if len(line) > 0 {
			out = append(out, string(line))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading paths: %w", err)
		}
	}
}
