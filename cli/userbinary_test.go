package cli_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A user's binary (examples/quickstart: its own module, its agent, cli.Main and no demo) lists
// no demo in its help, and answers demo with how to register one.
func TestAUsersBinaryListsNoDemo(t *testing.T) {
	user := filepath.Join(t.TempDir(), "quickstart")
	build := exec.Command("go", "build", "-o", user, ".")
	build.Dir = filepath.Join("..", "examples", "quickstart")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the quickstart: %v\n%s", err, out)
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(user, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), stdout.String(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stdout.String(), stderr.String()
	}
	code, out, _ := run("help")
	if code != 0 || !strings.Contains(out, "\n  run ") || strings.Contains(out, "\n  demo ") {
		t.Fatalf("help: exit %d, want run listed and demo not:\n%s", code, out)
	}
	if code, _, errOut := run("demo"); code != 2 || !strings.Contains(errOut, "this binary registers no demo (cli.RegisterDemo)") {
		t.Fatalf("demo: exit %d %q", code, errOut)
	}
	// The bundled binary registers one.
	if code, out, _ := execCLI(t, nil, "help"); code != 0 || !strings.Contains(out, "\n  demo ") {
		t.Fatalf("the bundled binary's help: exit %d\n%s", code, out)
	}
}
