package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// A command is one subcommand. Files register theirs in init.
type command struct {
	name    string
	summary string
	run     func(env *env, args []string) int
}

// env carries the process streams so commands run the same in tests and in main.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (e *env) errorf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "beamagents: "+format+"\n", args...)
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

// Main runs the command named by os.Args and exits the process. A binary's main calls it after
// its agents are registered (agent.Register, usually in the agent package's init). When a
// runner starts the binary as a Beam worker (--worker --id=… --control_endpoint=…), Beam's
// harness takes over instead: this is how registered agents reach Dataflow and Flink workers.
func Main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") && !isHelp(os.Args[1]) {
		// Started by a runner as a Beam worker (--worker --id=… --control_endpoint=…): Beam's
		// harness takes over and exits.
		flag.Parse()
		beam.Init()
	}
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:]))
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func run(e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || isHelp(args[0]) {
		usage(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		e.errorf("unknown command %q", args[0])
		usage(e.stderr)
		return 2
	}
	return c.run(e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: beamagents <command> [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
