package conformance

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"

	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/provider"
)

// The scenarios' keys and readings. Every scenario is one entity key with a quiet reading
// then (but for quiet_no_model_call) an anomaly whose milli-°C value selects the model's
// script: the loopback server finds it in the request's user message (devices.Anomaly) and
// answers the turn given by the number of tool messages the request carries.
const (
	// Device is the device of every reading: 2^53+1, which a float64 cannot hold.
	Device     = uint64(9007199254740993)
	DeviceText = "9007199254740993"

	quietMilliC = 21000
	// approveOver is the kit's Config.ApproveOverMilliC: the approval scenarios' readings are
	// at or above it, the others below.
	approveOver = 100000
	// maxTokens is the kit's Config.MaxTokens; only the budget scenario's answer exceeds it.
	maxTokens = 10000
	modelID   = "conformance-model"
)

// Anomalies by scenario.
const (
	finalMilliC       = 91001
	toolMilliC        = 91002
	exportMilliC      = 91003
	budgetMilliC      = 91004
	hostileToolMilliC = 91005
	hostileArgsMilliC = 91006
	hostileIntMilliC  = 91007
	approvedMilliC    = 100001
	deniedMilliC      = 100002
	timedOutMilliC    = 100003
)

// The replies' texts and the tool payloads the kit answers with.
const (
	finalText     = "Reading checked: the boiler sensor recovers on its own, no dispatch needed."
	ticketPayload = `{"ticket":"T-4411","eta_minutes":35}`
	resumedText   = "Dispatched a technician to device 9007199254740993: ticket T-4411, ETA 35 minutes."
	deniedText    = "The dispatch was not approved; the operator is informed."
	// lookupSite is in devices.lookup's row of Device: a lookup that lost the id's last digit
	// would find no device.
	lookupSite = "plant 1, boiler room"
)

func dispatchCall(id string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: provider.WireName(devices.ToolDispatch), Arguments: `{"device_id":` + DeviceText + `,"reason":"boiler sensor reads 91.0 °C"}`}
}

// script is each anomaly's replies, by turn.
var script = map[int64][]llmtest.Reply{
	finalMilliC: {{Text: finalText, InputTokens: 200, OutputTokens: 20}},
	toolMilliC: {
		{ToolCalls: []llmtest.ToolCall{{ID: "call_lookup", Name: provider.WireName(devices.ToolLookup), Arguments: `{"device_id":` + DeviceText + `}`}}, InputTokens: 210, OutputTokens: 18},
		{ToolCalls: []llmtest.ToolCall{dispatchCall("call_dispatch")}, InputTokens: 260, OutputTokens: 40},
		{Text: resumedText, InputTokens: 320, OutputTokens: 30},
	},
	exportMilliC: {
		{ToolCalls: []llmtest.ToolCall{dispatchCall("call_dispatch")}, InputTokens: 230, OutputTokens: 40},
		{Text: resumedText, InputTokens: 300, OutputTokens: 30},
	},
	budgetMilliC:      {{Text: finalText, InputTokens: 2 * maxTokens, OutputTokens: 20}},
	hostileToolMilliC: {{ToolCalls: []llmtest.ToolCall{{ID: "call_x", Name: "devices.selfdestruct", Arguments: `{"device_id":` + DeviceText + `}`}}}},
	hostileArgsMilliC: {{ToolCalls: []llmtest.ToolCall{{ID: "call_x", Name: provider.WireName(devices.ToolDispatch),
		Arguments: `{"device_id":` + DeviceText + `,"reason":"r","priority":"override"}`}}}},
	hostileIntMilliC: {{ToolCalls: []llmtest.ToolCall{{ID: "call_x", Name: provider.WireName(devices.ToolDispatch),
		Arguments: `{"device_id":18446744073709551616,"reason":"r"}`}}}},
	approvedMilliC: {
		{ToolCalls: []llmtest.ToolCall{dispatchCall("call_dispatch")}, InputTokens: 230, OutputTokens: 40},
		{Text: resumedText, InputTokens: 300, OutputTokens: 30},
	},
	deniedMilliC: {
		{ToolCalls: []llmtest.ToolCall{dispatchCall("call_dispatch")}, InputTokens: 230, OutputTokens: 40},
		{Text: deniedText, InputTokens: 300, OutputTokens: 30},
	},
	timedOutMilliC: {{ToolCalls: []llmtest.ToolCall{dispatchCall("call_dispatch")}, InputTokens: 230, OutputTokens: 40}},
}

var readsRe = regexp.MustCompile(`reads (-?[0-9]+) milli`)

// route finds a request's anomaly and turn.
func route(body []byte) (milliC int64, turn int, ok bool) {
	m := readsRe.FindSubmatch(body)
	if m == nil {
		return 0, 0, false
	}
	v, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	// The turn is the number of tool results the conversation carries, in either API's shape.
	return v, bytes.Count(body, []byte(`"role":"tool"`)) + bytes.Count(body, []byte(`"type":"tool_result"`)), true
}

// answer is the scripted reply to a request; a request the script does not know is answered
// with an HTTP 400, which fails its activation as model_error.
func answer(body []byte) llmtest.Reply {
	v, turn, ok := route(body)
	replies := script[v]
	if !ok || turn >= len(replies) {
		return llmtest.Reply{Status: 400}
	}
	return replies[turn]
}

// Server starts the loopback server of api (llmtest.OpenAI or llmtest.Anthropic), strict as
// the vendor's API, that answers the scenarios.
func Server(api string) *llmtest.Server {
	return llmtest.New(api, func(_ int, body []byte) llmtest.Reply { return answer(body) })
}

// wire is what a request of api carries, by what it shows: the declared tools (their wire
// names and schema form) and the answer to a tool call (its result message and call id).
var wire = map[string]struct{ declares, answers []string }{
	llmtest.OpenAI: {
		declares: []string{`"name":"` + provider.WireName(devices.ToolLookup) + `"`, `"name":"` + provider.WireName(devices.ToolDispatch) + `"`, `"strict":true`, `"parameters":`},
		answers:  []string{`"role":"tool"`, `"tool_call_id":"%s"`},
	},
	llmtest.Anthropic: {
		declares: []string{`"name":"` + provider.WireName(devices.ToolLookup) + `"`, `"name":"` + provider.WireName(devices.ToolDispatch) + `"`, `"input_schema":`},
		answers:  []string{`"type":"tool_result"`, `"tool_use_id":"%s"`},
	},
}

// answers is what a request of api carries that answers the tool call id.
func answers(api, id string) []string {
	w := wire[api].answers
	return []string{w[0], fmt.Sprintf(w[1], id)}
}

// requestsFor returns the requests of the anomaly milliC.
func requestsFor(reqs [][]byte, milliC int64) [][]byte {
	var out [][]byte
	for _, r := range reqs {
		if v, _, ok := route(r); ok && v == milliC {
			out = append(out, r)
		}
	}
	return out
}

func readingEvent(milliC int64) []byte {
	return fmt.Appendf(nil, `{"device_id":"%s","milli_c":%d}`, DeviceText, milliC)
}
