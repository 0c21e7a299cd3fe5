package testsvc

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// PostgresUser is the superuser of the clusters Postgres starts; it logs in without a
// password (trust authentication, loopback only).
const PostgresUser = "ltm"

// Postgres starts a PostgreSQL server of its own for the test's lifetime (initdb into a fresh
// directory, the server on a free loopback port, fsync off) and returns its address. The
// server refuses to run as root: a root test runs initdb and the server as the system's
// postgres user (which Debian's package creates), else as nobody. The binaries are found on
// PATH or under /usr/lib/postgresql/*/bin, where Debian installs them.
func Postgres(t testing.TB) string {
	t.Helper()
	bin := postgresBin(t)
	cred := postgresCredential(t)
	dir, err := os.MkdirTemp("", "testsvc-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", PostgresUser, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	port := freePort(t)
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-k", dir, "-F", "-c", "max_connections=50", "-c", "shared_buffers=16MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGINT is the server's fast shutdown: it ends its backends and exits.
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ready := filepath.Join(bin, "pg_isready")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if exec.Command(ready, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", PostgresUser, "-d", "postgres").Run() == nil {
			return addr
		}
	}
	t.Fatalf("postgres did not start: %s", out.String())
	return ""
}

// PostgresURL starts a server (Postgres) and returns the connection URL of its postgres
// database.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return "postgres://" + PostgresUser + "@" + Postgres(t) + "/postgres?sslmode=disable"
}

// postgresBin is the directory of initdb and postgres: PATH's, else the newest Debian one.
func postgresBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(real)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) < versionOf(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	missing(t, "postgresql (initdb, postgres)", "postgresql")
	return ""
}

func versionOf(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

// postgresCredential is the unprivileged user a root test runs the server as; nil when the
// test does not run as root.
func postgresCredential(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		}
	}
	t.Fatal("running as root, and neither a postgres nor a nobody user exists to run the server as")
	return nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
