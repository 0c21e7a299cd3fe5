// Package cli is the public command-line entry point of the runtime. A user's binary registers
// its agents and calls Main, and gets every beamagents command for them:
//
//	package main
//
//	import (
//		"github.com/beamagents/beamagents/cli"
//		_ "example.com/myagents/support" // registers its agent in init
//	)
//
//	func main() { cli.Main() }
//
// Beam ships the launching binary to the workers of remote runners (Dataflow, Flink), so an
// agent compiled into it is the agent those workers run; an agent that is not compiled into
// the binary cannot run there.
//
// Commands: approve, console, demo, dev, effector, generate, inspect, intent, manifest,
// pubsub-server, redrive, rehearse, replay, run, schema, send, help (`beamagents help` lists them; demo only in a
// binary that registers one with RegisterDemo). `dev --agent NAME` runs a registered agent
// locally, streaming on Prism with its tools, the console and a JSON API, keeping its state
// across restarts; `send` posts an event to it and `approve --state_dir DIR` (or `--to URL
// --token REF`) decides an approval on it (docs/dev.md). `generate proto` compiles a module's own
// tool and proposal .proto schemas and writes their Go bindings, with no protoc or buf
// (docs/interaction.md). Exit status: 0 success, 1 the command ran and its answer
// is negative (a refused document, a bad signature, an unparsable blob, a failed pipeline, a
// bounded run in which nothing succeeded), 2 usage (a flag value refused at launch, a run
// that could not succeed).
package cli
