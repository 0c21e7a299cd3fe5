// Command example is the devices agent written with Firebase Genkit for Go, registered as
// devices-genkit, with every beamagents command (run, replay, demo, inspect, …): the same
// tools, behaviour and outputs as the native devices agent, its model loop Genkit's generate
// loop whose model and tools are answered by the runtime.
package main

import "github.com/beamagents/beamagents/cli"

func main() { cli.Main() }
