package mountbench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RealWorld holds the figures of a working day's workloads, in seconds (the tree's peak memory
// in bytes); 0 when not measured (git or sqlite3 missing).
type RealWorld struct {
	CloneSeconds       float64 // git clone --no-hardlinks of the bench's repository
	StatusSeconds      float64 // the first git status after the clone
	StatusAgainSeconds float64 // the second and third, averaged
	CheckoutSeconds    float64 // git checkout of the branch that changes a tenth of the files
	SQLiteSeconds      float64 // Transactions small transactions, synchronous=FULL
	GrepSeconds        float64 // grep -r over the checked-out tree
	GrepAgainSeconds   float64 // the same again
	BuildSeconds       float64 // go build of a module the bench makes, build cache in the vault, cold
	DuSeconds          float64 // du -s over a tree of TreeFiles small files, entry caches expired
	FindSeconds        float64 // find over the same tree (after du, so its entries are known)
	// TreePeakRSS is the server's peak resident memory from making the tree to the end of
	// find (issue 25's "peak RSS at 100,000 files"), in bytes; 0 when it could not be read.
	TreePeakRSS uint64
}

// The word the grep looks for; one file in a hundred holds it.
const grepNeedle = "vaultuineedle"

// gitEnv keeps the user's and the system's git configuration out of the bench.
var gitEnv = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.org",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.org")

// makeRepo makes a bare git repository of files text files in dir, the same bytes every time:
// branch main, and branch other changing a tenth of them. Files sit 100 to a directory.
func makeRepo(dir string, files int) (string, error) {
	repo, err := os.MkdirTemp(dir, "vaultui-bench-repo-")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(repo)
		return "", fmt.Errorf("making the bench's git repository: %w", err)
	}
	if out, err := gitCommand(context.Background(), repo, "init", "-q", "--bare").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("git init: %w: %s", err, out))
	}
	var stream bytes.Buffer
	rng := rand.New(rand.NewPCG(25, 10))
	path := func(i int) string { return fmt.Sprintf("src/d%03d/f%05d.txt", i/100, i) }
	blob := func(w *bytes.Buffer, data []byte) {
		fmt.Fprintf(w, "data %d\n", len(data))
		w.Write(data)
		w.WriteByte('\n')
	}
	fmt.Fprintf(&stream, "commit refs/heads/main\nmark :1\ncommitter bench <bench@example.org> 1700000000 +0000\n")
	blob(&stream, []byte("the bench's tree"))
	for i := 0; i < files; i++ {
		fmt.Fprintf(&stream, "M 100644 inline %s\n", path(i))
		blob(&stream, textFile(rng, i%100 == 0))
	}
	fmt.Fprintf(&stream, "\ncommit refs/heads/other\ncommitter bench <bench@example.org> 1700000100 +0000\n")
	blob(&stream, []byte("change some files"))
	fmt.Fprintf(&stream, "from :1\n")
	changed := files / 10
	step := max(files/max(changed, 1), 1)
	for k, i := 0, 0; k < changed && i < files; k, i = k+1, i+step {
		fmt.Fprintf(&stream, "M 100644 inline %s\n", path(i))
		blob(&stream, textFile(rng, i%100 == 0))
	}
	stream.WriteString("\n")
	cmd := gitCommand(context.Background(), repo, "fast-import", "--quiet")
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("git fast-import: %w: %s", err, out))
	}
	if out, err := gitCommand(context.Background(), repo, "symbolic-ref", "HEAD", "refs/heads/main").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("git symbolic-ref: %w: %s", err, out))
	}
	return repo, nil
}

var words = strings.Fields("the of and to in is it that for on with as was at by be this from or have an are not but which one all were when there can more if will would about out up what so into some than them only other then its time could these two may first new like now any my also after where most over")

// textFile is 200 to 4,000 bytes of lines of words, as source or notes are.
func textFile(rng *rand.Rand, needle bool) []byte {
	var b bytes.Buffer
	size := 200 + rng.IntN(3800)
	for b.Len() < size {
		for n := 0; n < 10; n++ {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	if needle {
		b.WriteString(grepNeedle + "\n")
	}
	return b.Bytes()
}

func gitCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv
	return cmd
}

// timed runs cmd and returns how long it took; its output goes into the error should it fail.
func timed(cmd *exec.Cmd) (float64, []byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start).Seconds()
	if err != nil {
		return 0, out.Bytes(), fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, bytes.TrimSpace(out.Bytes()))
	}
	return d, out.Bytes(), nil
}

// measureRealWorld clones cfg.repo into dir, runs git status three times, checks out the other
// branch, greps the tree twice and commits cfg.Transactions SQLite transactions. Cold, the
// caches are dropped before the clone, the first status, the checkout, the first grep and the
// database.
func measureRealWorld(ctx context.Context, cfg Config, dir string, r *RealWorld, cold bool) error {
	var err error
	if cfg.repo != "" {
		work := filepath.Join(dir, "repo")
		if r.CloneSeconds, err = settledTimed(cold, false, gitCommand(ctx, dir, "clone", "-q", "--no-hardlinks", cfg.repo, work)); err != nil {
			return err
		}
		if err := settle(cold, false); err != nil {
			return err
		}
		var again float64
		for i := 0; i < 3; i++ {
			d, out, err := timed(gitCommand(ctx, work, "status", "--porcelain"))
			if err != nil {
				return err
			}
			if len(out) != 0 {
				return fmt.Errorf("git status after the clone: %q, want a clean tree", firstLine(out))
			}
			if i == 0 {
				r.StatusSeconds = d
			} else {
				again += d / 2
			}
		}
		r.StatusAgainSeconds = again
		if r.CheckoutSeconds, err = settledTimed(cold, false, gitCommand(ctx, work, "checkout", "-q", "other")); err != nil {
			return err
		}
		if err := settle(cold, false); err != nil {
			return err
		}
		want := (cfg.RepoFiles + 99) / 100 // one file in a hundred holds the needle
		for i := 0; i < 2; i++ {
			cmd := exec.CommandContext(ctx, "grep", "-r", "-l", "--exclude-dir=.git", grepNeedle, work)
			d, out, err := timed(cmd)
			if err != nil {
				return err
			}
			if n := bytes.Count(out, []byte("\n")); n != want {
				return fmt.Errorf("grep -r found %d files, want %d", n, want)
			}
			if i == 0 {
				r.GrepSeconds = d
			} else {
				r.GrepAgainSeconds = d
			}
		}
	}
	if err := measureTree(ctx, cfg, dir, r, cold); err != nil {
		return err
	}
	if cfg.goBuild {
		if err := settle(cold, false); err != nil {
			return err
		}
		if r.BuildSeconds, err = goBuild(ctx, dir); err != nil {
			return err
		}
	}
	if cfg.sqlite {
		if err := settle(cold, false); err != nil {
			return err
		}
		if r.SQLiteSeconds, err = sqliteTransactions(ctx, filepath.Join(dir, "bench.db"), cfg.Transactions); err != nil {
			return err
		}
	}
	return nil
}

// sqliteTransactions commits n transactions of one small row each with synchronous=FULL (the
// default rollback journal: each one creates, syncs and deletes it) and checks they all landed.
func sqliteTransactions(ctx context.Context, db string, n int) (float64, error) {
	var script bytes.Buffer
	script.WriteString("PRAGMA synchronous=FULL;\nCREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);\n")
	for i := 0; i < n; i++ {
		script.WriteString("INSERT INTO t(v) VALUES(randomblob(100));\n")
	}
	script.WriteString("SELECT count(*) FROM t;\n")
	cmd := exec.CommandContext(ctx, "sqlite3", "-bail", db)
	cmd.Stdin = &script
	d, out, err := timed(cmd)
	if err != nil {
		return 0, err
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(n) {
		return 0, fmt.Errorf("sqlite3: %d transactions left %q rows", n, firstLine(out))
	}
	return d, nil
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return string(bytes.TrimSuffix(line, []byte("\r")))
}

// measureTree makes a tree of cfg.TreeFiles small files (100 to a directory, untimed), then
// times du -s and find over it, as a backup tool or a desktop search would walk a home
// directory.
func measureTree(ctx context.Context, cfg Config, parent string, r *RealWorld, cold bool) error {
	dir := filepath.Join(parent, "tree")
	content := []byte("a small file, as notes and configuration are\n")
	peakKnown := cfg.server.reset()
	for i := 0; i < cfg.TreeFiles; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o700); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%06d", i)), content, 0o600); err != nil {
			return fmt.Errorf("making the tree: %w", err)
		}
	}
	var err error
	if r.DuSeconds, err = settledTimed(cold, true, exec.CommandContext(ctx, "du", "-s", dir)); err != nil {
		return err
	}
	d, out, err := timed(exec.CommandContext(ctx, "find", dir))
	if err != nil {
		return err
	}
	// Every file, every directory and the tree's root.
	if n, want := bytes.Count(out, []byte("\n")), cfg.TreeFiles+(cfg.TreeFiles+99)/100+1; n != want {
		return fmt.Errorf("find printed %d entries, want %d", n, want)
	}
	r.FindSeconds = d
	if peakKnown {
		r.TreePeakRSS = peakRSS(cfg.server.pid)
	}
	return nil
}

// goBuild makes a module of no dependencies in dir (a few packages of generated code, so the
// compiler reads and writes many files) and builds it with an empty build cache inside dir
// and no network, returning how long the build took.
func goBuild(ctx context.Context, dir string) (float64, error) {
	mod := filepath.Join(dir, "gomod")
	files := map[string]string{"go.mod": "module example.org/bench\n\ngo 1.22\n"}
	var imports strings.Builder
	for p := 0; p < 8; p++ {
		fmt.Fprintf(&imports, "\t%q\n", fmt.Sprintf("example.org/bench/p%d", p))
		for f := 0; f < 8; f++ {
			var src strings.Builder
			fmt.Fprintf(&src, "package p%d\n\nimport \"strings\"\n\n", p)
			for k := 0; k < 20; k++ {
				fmt.Fprintf(&src, "// F%d_%d joins its words.\nfunc F%d_%d(s []string) string {\n\tif len(s) > %d {\n\t\treturn strings.Join(s[%d:], \" \")\n\t}\n\treturn strings.ToUpper(strings.Join(s, \"-\"))\n}\n\n", f, k, f, k, k%5, k%5)
			}
			files[fmt.Sprintf("p%d/f%d.go", p, f)] = src.String()
		}
	}
	files["main.go"] = "package main\n\nimport (\n" + imports.String() + ")\n\nfunc main() {\n" +
		"\tprintln(p0.F0_0(nil), p1.F0_0(nil), p2.F0_0(nil), p3.F0_0(nil), p4.F0_0(nil), p5.F0_0(nil), p6.F0_0(nil), p7.F0_0(nil))\n}\n"
	for name, src := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			return 0, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(mod, "bench"), ".")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(dir, "gocache"), "GOPROXY=off", "GOFLAGS=",
		"GOTOOLCHAIN=local", "GOWORK=off", "GO111MODULE=on", "CGO_ENABLED=0")
	d, _, err := timed(cmd)
	return d, err
}
