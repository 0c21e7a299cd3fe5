package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// A command is one command or subcommand. Files register theirs in init. A command either
// runs or dispatches its first argument to one of its subcommands, exactly as the top level
// dispatches commands.
type command struct {
	name    string
	summary string
	run     func(env *env, args []string) int
	subs    []*command // when run is nil
	usage   string     // printed after the list of subcommands
	// absent, when set, says whether the command is missing from this binary (a user's
	// binary without a demo): help does not list it then.
	absent func() bool
}

// env carries the process streams so commands run the same in tests and in main.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (e *env) errorf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "beamagents: "+format+"\n", args...)
}

// top is the top level: beamagents <command>.
var top = &command{name: "beamagents"}

func register(c *command) {
	if top.find(c.name) != nil {
		panic("duplicate command " + c.name)
	}
	top.subs = append(top.subs, c)
	slices.SortFunc(top.subs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
}

func (c *command) find(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
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

func run(e *env, args []string) int { return top.dispatch(e, top.name, args) }

// dispatch runs c, or the subcommand its first argument names. No argument or an unknown one
// is a usage error (2); help lists the subcommands on stdout (0).
func (c *command) dispatch(e *env, path string, args []string) int {
	if c.run != nil {
		return c.run(e, args)
	}
	if len(args) == 0 {
		c.printUsage(e.stderr, path)
		return 2
	}
	if args[0] == "help" || isHelp(args[0]) {
		c.printUsage(e.stdout, path)
		return 0
	}
	sub := c.find(args[0])
	if sub == nil {
		if c == top {
			e.errorf("unknown command %q", args[0])
		} else {
			e.errorf("unknown %s subcommand %q", strings.TrimPrefix(path, top.name+" "), args[0])
		}
		c.printUsage(e.stderr, path)
		return 2
	}
	return sub.dispatch(e, path+" "+sub.name, args[1:])
}

func (c *command) printUsage(w io.Writer, path string) {
	fmt.Fprintf(w, "usage: %s <command> [flags] [args]\n\ncommands:\n", path)
	for _, s := range c.subs {
		if s.absent == nil || !s.absent() {
			fmt.Fprintf(w, "  %-12s %s\n", s.name, s.summary)
		}
	}
	if c.usage != "" {
		fmt.Fprintf(w, "\n%s\n", c.usage)
	}
}
