package bind

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/beamagents/beamagents/model"
)

// DefaultSystemPrompt is the system message of DefaultPrompt("").
const DefaultSystemPrompt = "You are an agent in an event-driven runtime. Answer every turn with exactly one JSON value that satisfies the response schema, and nothing else."

// DefaultPrompt returns a prompt builder: the system message, the memory as a second system
// message, the triggering event as the user message, then for each completed step the
// proposal (assistant) and its outcome (tool). Bytes that are not UTF-8 are shown in base64.
func DefaultPrompt(system string) PromptBuilder {
	if system == "" {
		system = DefaultSystemPrompt
	}
	return func(in *PromptInput) []model.Message {
		msgs := []model.Message{{Role: model.RoleSystem, Content: system}}
		if len(in.Memory) > 0 {
			var b strings.Builder
			b.WriteString("Memory:")
			for _, m := range in.Memory {
				fmt.Fprintf(&b, "\n%s: %s", m.Key, text(m.Value))
			}
			msgs = append(msgs, model.Message{Role: model.RoleSystem, Content: b.String()})
		}
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: text(in.Trigger)})
		for _, s := range in.Steps {
			if s.Proposal != "" {
				msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: s.Proposal})
			}
			if s.Outcome != "" {
				detail := text(s.Payload)
				if s.Message != "" {
					detail = strings.TrimSpace(detail + " " + s.Message)
				}
				if s.Note != "" { // only with a note, so a prompt without one is unchanged
					detail += " (note: " + s.Note + ")"
				}
				msgs = append(msgs, model.Message{Role: model.RoleTool, Content: fmt.Sprintf("%s %s: %s", s.Tool, s.Outcome, detail)})
			}
		}
		return msgs
	}
}

func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}
