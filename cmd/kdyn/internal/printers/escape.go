package printers

import "strings"

// EscapeTerminal is kubectl's EscapeTerminal, which its describers and
// events apply to what they print: escape characters and carriage returns
// are shown as ^[ and \r, so that printed values cannot drive the
// terminal.
var EscapeTerminal = strings.NewReplacer("\x1b", "^[", "\r", "\\r").Replace
