package cli

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// run --help lists run's own flags first, under their headings in the table's order, then
// Beam's and its runners', each flag once; a flag run does not know is refused with the
// usage line and a pointer to --help.
func TestRunHelpListsTheRuntimesFlagsFirst(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		code, out, errOut := runCLI(t, "", "run", arg)
		if code != 0 || errOut != "" {
			t.Fatalf("run %s: exit %d, stderr %q", arg, code, errOut)
		}
		if !strings.HasPrefix(out, "usage: "+runUsage+"\n") {
			t.Fatalf("run %s does not begin with the usage line:\n%s", arg, out)
		}
		// Which heading each flag line is under, and each flag's count.
		under, seen := map[string]string{}, map[string]int{}
		var headings []string
		heading := ""
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(line, "  --"):
				name, _, _ := strings.Cut(strings.TrimPrefix(line, "  --"), " ")
				under[name] = heading
				seen[name]++
			case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
				heading = strings.TrimSuffix(line, ":")
				headings = append(headings, heading)
			}
		}
		var want []string
		ours, current := 0, ""
		for _, f := range runFlags {
			if f.heading != "" {
				want = append(want, f.heading)
				current = f.heading
				continue
			}
			ours++
			if under[f.name] != current {
				t.Errorf("--%s is under %q, want %q", f.name, under[f.name], current)
			}
		}
		beam := headings[len(headings)-1]
		if !slices.Equal(headings[:len(headings)-1], want) || !strings.HasPrefix(beam, "Beam's flags") {
			t.Fatalf("headings %q, want %q then Beam's", headings, want)
		}
		for _, name := range []string{"endpoint", "environment_type", "job_name", "project", "region", "temp_location", "staging_location", "parallelism"} {
			if under[name] != beam {
				t.Errorf("Beam's --%s is under %q, want %q", name, under[name], beam)
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("--%s is listed %d times", name, n)
			}
			if strings.HasPrefix(name, "test.") {
				t.Errorf("the test driver's --%s is listed", name)
			}
		}
		if strings.Contains(out, "beamagents help\n") || !strings.Contains(out, "  --agent string\n") {
			t.Errorf("--agent is not shown as a string flag:\n%s", out)
		}
		t.Logf("run %s: %d of run's flags, then %d of Beam's", arg, ours, len(seen)-ours)
	}

	code, out, errOut := runCLI(t, "", "run", "--no_such_flag")
	if code != 2 || out != "" || !strings.Contains(errOut, "flag provided but not defined: -no_such_flag") ||
		!strings.HasSuffix(errOut, "usage: "+runUsage+"\n(beamagents run --help lists every flag)\n") {
		t.Fatalf("an unknown flag: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// A binary built on Main without a demo (a user's) does not list demo in its help, and
// answers demo with how to register one; the bundled binary lists it.
func TestHelpListsDemoOnlyInABinaryWithOne(t *testing.T) {
	listed := func() bool {
		t.Helper()
		code, out, _ := runCLI(t, "", "help")
		if code != 0 || !strings.Contains(out, "\n  run ") {
			t.Fatalf("help: exit %d\n%s", code, out)
		}
		return strings.Contains(out, "\n  demo ")
	}
	if !listed() {
		t.Fatal("help does not list the registered demo")
	}
	saved := demo
	demo = Demo{}
	defer func() { demo = saved }()
	if listed() {
		t.Fatal("a binary without a demo lists demo in its help")
	}
	if code, _, errOut := runCLI(t, "", "demo"); code != 2 || !strings.Contains(errOut, "this binary registers no demo (cli.RegisterDemo)") {
		t.Fatalf("demo without one: exit %d %q", code, errOut)
	}
}

// The package doc names every command `beamagents help` lists, and only those.
func TestPackageDocListsEveryCommand(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "// Commands: ")
	list, _, ok2 := strings.Cut(after, " (`beamagents help`")
	if !ok || !ok2 {
		t.Fatal("doc.go has no \"Commands: …\" list")
	}
	documented := strings.Split(strings.ReplaceAll(list, "\n// ", " "), ", ")
	var registered []string
	for _, c := range top.subs {
		registered = append(registered, c.name)
	}
	registered = append(registered, "help")
	if !slices.Equal(documented, registered) {
		t.Fatalf("the package doc lists %q, the binary has %q", documented, registered)
	}
}
