package cli

import (
	"flag"
	"io"
)

// newFlags returns a FlagSet that reports errors on e's stderr and never exits the process.
func newFlags(e *env, name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		io.WriteString(e.stderr, "usage: beamagents "+usageLine+"\n")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, returning ok=false (and the exit code 2 or 0 for -h) on failure.
func parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	switch err := fs.Parse(args); err {
	case nil:
		return 0, true
	case flag.ErrHelp:
		return 0, false
	default:
		return 2, false
	}
}
