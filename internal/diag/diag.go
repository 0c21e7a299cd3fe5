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
