package anthropic_test

import (
	"context"
	"fmt"
	"os"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
	"github.com/beamagents/beamagents/model/provider"
)

// A call to an the Messages API (here a loopback one). The key is read from the
// environment variable the reference names.
func ExampleNew() {
	srv := llmtest.New(llmtest.Anthropic, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{Text: `{"case":"support.reply","fields":{"support.reply.text":"Hi!"}}`, InputTokens: 12, OutputTokens: 9}
	})
	defer srv.Close()
	os.Setenv("EXAMPLE_ANTHROPIC_KEY", "sk-example")
	m, err := anthropic.New(provider.Config{BaseURL: srv.BaseURL(), APIKey: "env:EXAMPLE_ANTHROPIC_KEY", Model: "claude-example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := support.Schema()
	resp, err := m.Stream(context.Background(), &model.Request{
		Messages:       []model.Message{{Role: model.RoleUser, Content: "Hello"}},
		ResponseSchema: s.ProviderJSONSchema(), SchemaDigest: s.Digest(),
	}, func([]byte) error { return nil })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(resp.Text), resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.FinishReason)
	// Output: {"case":"support.reply","fields":{"support.reply.text":"Hi!"}} 12 9 tool_use
}
