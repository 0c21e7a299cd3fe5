package bindings

import "github.com/beamagents/beamagents/agent/internal/bind"

// PromptBuilder turns a step's input into the model's messages. It must be deterministic: the
// messages are part of the replay-cache key.
type PromptBuilder = bind.PromptBuilder

// PromptInput is what a prompt builder sees for one step: the key, its activation and step,
// the triggering event, the key's memory and the activation's completed steps.
type PromptInput = bind.PromptInput

// MemoryItem is one memory entry.
type MemoryItem = bind.MemoryItem

// StepView is one completed step as a prompt builder sees it.
type StepView = bind.StepView

// DefaultSystemPrompt is the system message of DefaultPrompt("").
const DefaultSystemPrompt = bind.DefaultSystemPrompt

// DefaultPrompt returns a prompt builder: the system message, the memory as a second system
// message, the triggering event as the user message, then for each completed step the
// proposal (assistant) and its outcome (tool). Bytes that are not UTF-8 are shown in base64.
func DefaultPrompt(system string) PromptBuilder { return bind.DefaultPrompt(system) }
