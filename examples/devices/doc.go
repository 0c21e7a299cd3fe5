// Package devices is an example agent written as Go code (a handler, no bindings): it watches
// temperature readings of devices.
//
// An external event is a reading {"device_id":"<uint64 as a decimal string>","milli_c":<int>}.
// A reading within the normal band (BandLowMilliC to BandHighMilliC, −20,000 to 60,000
// milli-°C) is appended to the key's memory ring of recent readings and needs no model call
// and no output beyond its trace. An anomaly asks the model with two native tools: the inline
// read-only devices.lookup (answered from Devices, a table in this package, in the worker) and
// the side-effecting devices.dispatch, whose arguments carry the device id as a uint64 field.
// A dispatch is a signed TOOL intent; its ToolResult resumes the activation, and the model's
// text answer becomes the final reply. A reading that does not decode fails its activation
// as envelope_invalid.
//
// The recorded model (ModelScript, a model.Scripted script) answers the demo's traffic
// (Envelopes) offline. The dispatch's ToolResult in Envelopes is unsigned, as recorded: a run
// that verifies results (the default with a keyring) refuses it as result_refused, while an
// effector's signed result resumes the activation.
//
// The package registers devices.dispatch for the effector (Tools, tool.RegisterAgentTools): a
// simulated dispatch of a technician whose ticket is derived from the intent id, so a binary
// with this agent executes its intents out of the box (`beamagents effector`, `dev`). Its tests
// drive the agent with package agent/agenttest. docs/agents.md describes the handler API the
// agent is written on.
package devices
