package model

import (
	"strings"
	"testing"
)

// benchRequests are the requests BenchmarkCacheKey keys: the driver benchmark's first step (the
// default system prompt and a short event), and a later step whose history carries JSON
// proposals, full of quotes to escape, and non-ASCII text.
func benchRequests() map[string]*Request {
	first := &Request{
		Model: "scripted",
		Messages: []Message{
			{Role: RoleSystem, Content: "You are an agent in an event-driven runtime. Answer every turn with exactly one JSON value that satisfies the response schema, and nothing else."},
			{Role: RoleUser, Content: "message 123"},
		},
		SchemaDigest: "sha256:5d41402abc4b2a76b9719d911017c592e9c1f6d4a8b7e0f3c2d1a0b9c8d7e6f5",
		Sampling:     Sampling{Temperature: f64(0), MaxOutputTokens: 1024},
		EntityKey:    []byte("k"),
		Seq:          123,
		Step:         0,
	}
	history := *first
	history.Messages = append([]Message{}, first.Messages...)
	history.Messages = append(history.Messages, Message{Role: RoleSystem, Content: "Memory:\nlast_order: #4512 — shipped 3 days ago\ncustomer: Zoë Müller"})
	proposal := `{"schema":"beamagents.value.v1","value":{"case":"support.lookup","fields":{"support.lookup.order":"#4512","note":"<customer> asks & waits"}}}`
	for range 4 {
		history.Messages = append(history.Messages,
			Message{Role: RoleAssistant, Content: proposal},
			Message{Role: RoleTool, Content: "orders ok: " + strings.Repeat(`{"status":"shipped","eta":"2026-01-03"} `, 4)})
	}
	history.Step = 8
	return map[string]*Request{"first_step": first, "history": &history}
}

// BenchmarkCacheKey measures the replay-cache key of one model request.
func BenchmarkCacheKey(b *testing.B) {
	for _, name := range []string{"first_step", "history"} {
		req := benchRequests()[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				CacheKey(req)
			}
		})
	}
}
