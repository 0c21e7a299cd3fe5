package llmtest

import "testing"

// FuzzRules: the request checks of both APIs never panic on any body, and every refusal names
// its rule.
func FuzzRules(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"tools":[{"type":"function","function":{"name":"a.b","strict":true,"parameters":{"type":"object","properties":{"x":{"type":"string","maxLength":3}},"required":[],"additionalProperties":false}}}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c"}]},{"role":"tool","tool_call_id":"d"}]}`,
		`{"tools":[{"name":"a","input_schema":{"type":"string"}}],"tool_choice":{"type":"tool","name":"b"}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t"}]}]}`,
		`{"response_format":{"type":"json_schema","json_schema":{"name":"a.b","strict":true,"schema":{"$defs":{"d":{"items":{"anyOf":[1]}}}}}}}`,
		`[]`, `null`, `{"messages":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, check := range []func([]byte) *refusal{checkOpenAI, checkAnthropic} {
			if r := check(body); r != nil && r.rule == "" {
				t.Fatalf("a refusal without a rule: %q", r.message)
			}
		}
	})
}
