// Package diag holds what the module's typed errors share: the one-line rendering of a
// diagnostic and the code-and-rule match behind their Is methods.
package diag

import "strings"

// OneLine escapes CR and LF, so a diagnostic stays one line whatever untrusted text it quotes.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}

// Match reports whether an error with code and rule matches a target with targetCode and
// targetRule: the same code and, when the target names a rule, the same rule.
func Match[C, R comparable](code C, rule R, targetCode C, targetRule R) bool {
	var any R
	return code == targetCode && (targetRule == any || targetRule == rule)
}

// Line renders the one-line diagnostic "CODE rule: where: message" ("CODE rule: message"
// when where is empty).
func Line(code, rule, where, message string) string {
	var b strings.Builder
	b.WriteString(code)
	b.WriteByte(' ')
	b.WriteString(rule)
	b.WriteString(": ")
	if where != "" {
		b.WriteString(where)
		b.WriteString(": ")
	}
	b.WriteString(message)
	return OneLine(b.String())
}
