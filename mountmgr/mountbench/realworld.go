package mountbench

import (
	"bufio"
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

// RealWorld holds the figures of a working day's workloads, in seconds; 0 when not measured
// (git or sqlite3 missing).
type RealWorld struct {
	CloneSeconds       float64 // git clone --no-hardlinks of the bench's repository
	StatusSeconds      float64 // the first git status after the clone
	StatusAgainSeconds float64 // the second and third, averaged
	CheckoutSeconds    float64 // git checkout of the branch that changes RepoChanged files
	SQLiteSeconds      float64 // Transactions small transactions, synchronous=FULL
	GrepSeconds        float64 // grep -r over the checked-out tree
	GrepAgainSeconds   float64 // the same again
}

// The word the grep looks for; one file in a hundred holds it.
const grepNeedle = "vaultuineedle"

// gitEnv keeps the user's and the system's git configuration out of the bench.
var gitEnv = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.org",
	"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.org")

// makeRepo makes a bare git repository of files text files in dir, the same bytes every time:
// branch main, and branch other changing changed of them. Files sit 100 to a directory.
func makeRepo(dir string, files, changed int) (string, error) {
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
		if err := settle(cold, false); err != nil {
			return err
		}
		work := filepath.Join(dir, "repo")
		if r.CloneSeconds, _, err = timed(gitCommand(ctx, dir, "clone", "-q", "--no-hardlinks", cfg.repo, work)); err != nil {
			return err
		}
		var again float64
		for i := 0; i < 3; i++ {
			if i == 0 {
				if err := settle(cold, false); err != nil {
					return err
				}
			}
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
		if err := settle(cold, false); err != nil {
			return err
		}
		if r.CheckoutSeconds, _, err = timed(gitCommand(ctx, work, "checkout", "-q", "other")); err != nil {
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
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan()
	return sc.Text()
}
