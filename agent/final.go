package agent

import "github.com/beamagents/beamagents/internal/canonjson"

// renderFinal renders the final action of a reply (Context.Reply, ReplyValue: for a bindings
// agent, the exact admitted canonical proposal document, LF included); the complete rendered
// action, after escaping, is measured against Limits.MaxFinalBytes, and a reply over it fails,
// never truncated. The bridge from an admitted proposal to the final action is described in
// docs/final-action.md.
//
// renderFinal renders the final action carrying message: {"kind":"final","message":"…"} and a
// terminal LF. The message (valid UTF-8: an admitted document) is written as a canonical JSON
// string, by the same writer as every canonical document of the runtime: '"', '\' and
// control characters escaped (\n, \r, \t, \b, \f, else \u00xx), every other byte as is.
func renderFinal(message string) []byte {
	b := make([]byte, 0, len(message)+len(message)/4+32) // a document escapes each of its quotes: about one byte in six
	b = append(b, `{"kind":"final","message":`...)
	b = canonjson.AppendString(b, message)
	return append(b, "}\n"...)
}
