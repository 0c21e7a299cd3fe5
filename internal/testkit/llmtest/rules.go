package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Rule names a request rule a vendor's API enforces, which the server enforces too: a request
// that breaks one is answered 400 with the API's error body, and the rule is recorded
// (Server.Refusals). The rules, API by API, are the table of docs/models.md.
type Rule string

// The rules.
const (
	// RuleToolName: a tool (Anthropic) or function (OpenAI) name outside ^[a-zA-Z0-9_-]{1,64}$.
	RuleToolName Rule = "tool_name"
	// RuleDuplicateTool: two tools of one request with the same name.
	RuleDuplicateTool Rule = "duplicate_tool"
	// RuleStrictSchema: an OpenAI strict-mode schema (response_format json_schema or a function
	// tool, with strict: true) that breaks the structured-output rules: an object root, every
	// object with additionalProperties false and every property required, and only the
	// supported keywords.
	RuleStrictSchema Rule = "strict_schema"
	// RuleSchemaName: an OpenAI response_format json_schema name outside ^[a-zA-Z0-9_-]{1,64}$.
	RuleSchemaName Rule = "schema_name"
	// RuleInputSchema: an Anthropic tool whose input_schema's type is not "object".
	RuleInputSchema Rule = "input_schema"
	// RuleToolChoice: a tool_choice that forces a tool the request does not declare.
	RuleToolChoice Rule = "tool_choice"
	// RuleToolMessage: an OpenAI tool message whose tool_call_id answers no call of the
	// assistant message before it.
	RuleToolMessage Rule = "tool_message"
	// RuleUnansweredCall: a tool call left unanswered: an OpenAI assistant message's tool call
	// without its tool message before the next other message (or the end); an Anthropic
	// tool_use without its tool_result in the user message right after.
	RuleUnansweredCall Rule = "unanswered_call"
	// RuleRoleOrder: Anthropic messages that do not alternate user and assistant starting with
	// user, or a role other than those two.
	RuleRoleOrder Rule = "role_order"
	// RuleToolResult: an Anthropic tool_result that answers no tool_use of the assistant message
	// right before, or that follows other content of its user message.
	RuleToolResult Rule = "tool_result"
	// RuleNotJSON: a body that is not one JSON object.
	RuleNotJSON Rule = "not_json"
)

// refusal is a request the API refuses: the rule, the parameter at fault (OpenAI's param)
// and the message of the error body.
type refusal struct {
	rule    Rule
	param   string
	message string
}

func refuse(rule Rule, param, format string, args ...any) *refusal {
	return &refusal{rule: rule, param: param, message: fmt.Sprintf(format, args...)}
}

// toolNamePattern is the name pattern of both APIs' tools.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// obj and arr read the generic JSON a request decodes to.
type obj = map[string]any

func asObj(v any) obj   { o, _ := v.(obj); return o }
func asArr(v any) []any { a, _ := v.([]any); return a }
func asStr(v any) string {
	s, _ := v.(string)
	return s
}

func decode(body []byte) (obj, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v obj
	err := d.Decode(&v)
	return v, err
}

// checkOpenAI returns the rule of the Chat Completions API that body breaks, nil if none.
func checkOpenAI(body []byte) *refusal {
	req, err := decode(body)
	if err != nil {
		return refuse(RuleNotJSON, "", "We could not parse the JSON body of your request.")
	}
	declared := map[string]bool{}
	for i, t := range asArr(req["tools"]) {
		fn := asObj(asObj(t)["function"])
		name := asStr(fn["name"])
		param := fmt.Sprintf("tools[%d].function.name", i)
		switch {
		case !toolNamePattern.MatchString(name):
			return refuse(RuleToolName, param, "Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", param)
		case declared[name]:
			return refuse(RuleDuplicateTool, "tools", "Invalid 'tools': the function name '%s' is declared more than once.", name)
		}
		declared[name] = true
		if strict, _ := fn["strict"].(bool); strict {
			if r := strictSchema(fmt.Sprintf("tools[%d].function.parameters", i), fn["parameters"]); r != nil {
				return r
			}
		}
	}
	if rf := asObj(req["response_format"]); asStr(rf["type"]) == "json_schema" {
		js := asObj(rf["json_schema"])
		if name := asStr(js["name"]); !toolNamePattern.MatchString(name) {
			return refuse(RuleSchemaName, "response_format.json_schema.name", "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.")
		}
		if strict, _ := js["strict"].(bool); strict {
			if r := strictSchema("response_format", js["schema"]); r != nil {
				return r
			}
		}
	}
	if tc := asObj(req["tool_choice"]); tc != nil {
		name := asStr(asObj(tc["function"])["name"])
		if asStr(tc["type"]) == "function" && !declared[name] {
			return refuse(RuleToolChoice, "tool_choice", "Invalid value for 'tool_choice': the function '%s' is not among the request's tools.", name)
		}
	}
	return openAIOrder(asArr(req["messages"]))
}

// openAIOrder checks that every tool message answers a call of the assistant message it
// follows (through the other tool messages answering it), and that every call is answered
// before the next message of another role.
func openAIOrder(msgs []any) *refusal {
	var pending []string // the unanswered call ids of the last assistant message
	for i, m := range msgs {
		msg := asObj(m)
		if asStr(msg["role"]) == "tool" {
			id := asStr(msg["tool_call_id"])
			k := slices.Index(pending, id)
			if k < 0 {
				return refuse(RuleToolMessage, fmt.Sprintf("messages.[%d].role", i), "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = slices.Delete(pending, k, k+1)
			continue
		}
		if len(pending) > 0 {
			return unanswered(pending)
		}
		for _, c := range asArr(msg["tool_calls"]) {
			pending = append(pending, asStr(asObj(c)["id"]))
		}
	}
	if len(pending) > 0 {
		return unanswered(pending)
	}
	return nil
}

func unanswered(ids []string) *refusal {
	return refuse(RuleUnansweredCall, "messages", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(ids, ", "))
}

// strictKeywords are the JSON Schema keywords OpenAI's strict structured outputs take: the
// structural ones, and the constraints it documents as supported (pattern and format of
// strings; bounds and multipleOf of numbers; minItems and maxItems of arrays). Anything else
// (minLength, maxLength, oneOf, allOf, not, if/then/else, patternProperties, custom keywords,
// …) is refused.
var strictKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "anyOf": true, "$ref": true, "$defs": true, "definitions": true, "description": true, "title": true,
	"pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true,
}

// strictSchema checks an OpenAI strict-mode schema: an object at the root (not anyOf), and
// every schema node within the rules.
func strictSchema(param string, v any) *refusal {
	root := asObj(v)
	if asStr(root["type"]) != "object" || root["anyOf"] != nil {
		return refuse(RuleStrictSchema, param, "Invalid schema for %s: schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%v\"'.", param, root["type"])
	}
	return strictNode(param, nil, root)
}

func strictNode(param string, path []string, node obj) *refusal {
	bad := func(format string, args ...any) *refusal {
		return refuse(RuleStrictSchema, param, "Invalid schema for %s: In context=(%s), %s.", param, quoted(path), fmt.Sprintf(format, args...))
	}
	for _, k := range sortedKeys(node) {
		if !strictKeywords[k] {
			return bad("'%s' is not permitted", k)
		}
	}
	if props := asObj(node["properties"]); node["properties"] != nil || asStr(node["type"]) == "object" {
		if ap, ok := node["additionalProperties"].(bool); !ok || ap {
			return bad("'additionalProperties' is required to be supplied and to be false")
		}
		var required []string
		for _, r := range asArr(node["required"]) {
			required = append(required, asStr(r))
		}
		for _, k := range sortedKeys(props) {
			if !slices.Contains(required, k) {
				return bad("'required' is required to be supplied and to be an array including every key in properties. Missing '%s'", k)
			}
		}
		for _, k := range sortedKeys(props) {
			if r := strictNode(param, append(slices.Clone(path), "properties", k), asObj(props[k])); r != nil {
				return r
			}
		}
	}
	for _, defsKey := range []string{"$defs", "definitions"} {
		defs := asObj(node[defsKey])
		for _, k := range sortedKeys(defs) {
			if r := strictNode(param, append(slices.Clone(path), defsKey, k), asObj(defs[k])); r != nil {
				return r
			}
		}
	}
	if items := asObj(node["items"]); items != nil {
		if r := strictNode(param, append(slices.Clone(path), "items"), items); r != nil {
			return r
		}
	}
	for i, alt := range asArr(node["anyOf"]) {
		if r := strictNode(param, append(slices.Clone(path), "anyOf", fmt.Sprint(i)), asObj(alt)); r != nil {
			return r
		}
	}
	return nil
}

func quoted(path []string) string {
	q := make([]string, len(path))
	for i, p := range path {
		q[i] = "'" + p + "'"
	}
	return strings.Join(q, ", ")
}

func sortedKeys(o obj) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkAnthropic returns the rule of the Messages API that body breaks, nil if none.
func checkAnthropic(body []byte) *refusal {
	req, err := decode(body)
	if err != nil {
		return refuse(RuleNotJSON, "", "invalid request: the body is not JSON")
	}
	declared := map[string]bool{}
	for i, t := range asArr(req["tools"]) {
		tool := asObj(t)
		if typ := asStr(tool["type"]); typ != "" && typ != "custom" {
			continue // a server tool of the API's own, named by the API
		}
		name := asStr(tool["name"])
		switch {
		case !toolNamePattern.MatchString(name):
			return refuse(RuleToolName, "", "tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		case declared[name]:
			return refuse(RuleDuplicateTool, "", "tools: Tool names must be unique.")
		}
		declared[name] = true
		if typ := asStr(asObj(tool["input_schema"])["type"]); typ != "object" {
			return refuse(RuleInputSchema, "", "tools.%d.custom.input_schema.type: Input should be 'object'", i)
		}
	}
	if tc := asObj(req["tool_choice"]); asStr(tc["type"]) == "tool" && !declared[asStr(tc["name"])] {
		return refuse(RuleToolChoice, "", "tool_choice: the tool '%s' is not among the request's tools", asStr(tc["name"]))
	}
	return anthropicOrder(asArr(req["messages"]))
}

// anthropicOrder checks that the messages alternate user and assistant, starting with user;
// that the user message after an assistant message with tool_use blocks answers every one of
// them with a tool_result, before any other content; and that no tool_result answers anything
// else.
func anthropicOrder(msgs []any) *refusal {
	prev := ""
	var uses []string // the tool_use ids of the assistant message before
	for i, m := range msgs {
		msg := asObj(m)
		role := asStr(msg["role"])
		switch {
		case role != "user" && role != "assistant":
			return refuse(RuleRoleOrder, "", "messages.%d.role: Input should be 'user' or 'assistant'", i)
		case i == 0 && role != "user":
			return refuse(RuleRoleOrder, "", "messages: first message must use the \"user\" role")
		case role == prev:
			return refuse(RuleRoleOrder, "", "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"%s\" roles in a row", role)
		}
		prev = role
		blocks := asArr(msg["content"]) // a string content has no blocks
		if role == "assistant" {
			uses = nil
			for _, b := range blocks {
				if blk := asObj(b); asStr(blk["type"]) == "tool_use" {
					uses = append(uses, asStr(blk["id"]))
				}
			}
			continue
		}
		answered := map[string]bool{}
		other := false
		for _, b := range blocks {
			blk := asObj(b)
			if asStr(blk["type"]) != "tool_result" {
				other = true
				continue
			}
			id := asStr(blk["tool_use_id"])
			switch {
			case other:
				return refuse(RuleToolResult, "", "messages.%d.content: tool_result blocks must come first in a user message, before any other content", i)
			case !slices.Contains(uses, id):
				return refuse(RuleToolResult, "", "messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, id)
			}
			answered[id] = true
		}
		var missing []string
		for _, id := range uses {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return refuse(RuleUnansweredCall, "", "messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		uses = nil
	}
	return nil
}
