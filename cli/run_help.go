package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// runUsage is run's usage line.
const runUsage = "beamagents run --agent NAME (--input GLOB | --input_subscription SUB) (--output_dir DIR | --intents_topic T ...) [flags]"

// printRunHelp prints `run --help`: the usage line, run's own flags under their headings in
// the order of runFlags, then every other flag of the process (Beam's, its runners' and its
// file systems'), by name.
func printRunHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n", runUsage)
	shown := map[string]bool{}
	for _, f := range runFlags {
		if f.heading != "" {
			fmt.Fprintf(w, "\n%s:\n", f.heading)
			continue
		}
		if fl := flag.Lookup(f.name); fl != nil {
			shown[f.name] = true
			printFlag(w, fl)
		}
	}
	fmt.Fprintf(w, "\nBeam's flags (its runners: Dataflow, Flink, job services; file systems; workers):\n")
	flag.VisitAll(func(fl *flag.Flag) {
		if !shown[fl.Name] && !strings.HasPrefix(fl.Name, "test.") {
			printFlag(w, fl)
		}
	})
}

// printFlag prints one flag as flag.PrintDefaults does, with two dashes.
func printFlag(w io.Writer, fl *flag.Flag) {
	typ, usage := flag.UnquoteUsage(fl)
	fmt.Fprintf(w, "  --%s", fl.Name)
	if typ != "" {
		fmt.Fprintf(w, " %s", typ)
	}
	fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(usage, "\n", "\n    \t"))
	switch {
	case fl.DefValue == "" || fl.DefValue == "false" || fl.DefValue == "0" || fl.DefValue == "0s":
	case typ == "string":
		fmt.Fprintf(w, " (default %q)", fl.DefValue)
	default:
		fmt.Fprintf(w, " (default %s)", fl.DefValue)
	}
	fmt.Fprintln(w)
}
