package root

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/i18n"
)

// translatedLanguages are the languages of kubectl's message catalogs
// (k8s.io/kubectl/pkg/util/i18n) other than English.
var translatedLanguages = []string{"de_DE", "fr_FR", "it_IT", "ja_JP", "ko_KR", "pt_BR", "zh_CN", "zh_TW"}

// helpLanguage is the language help is shown in, read as kubectl reads it
// (LC_ALL, else LC_MESSAGES, else LANG, as "de_DE.UTF-8"): one of
// translatedLanguages, or "" for English.
func helpLanguage(getenv func(string) string) string {
	lang := getenv("LC_ALL")
	if lang == "" {
		lang = getenv("LC_MESSAGES")
	}
	if lang == "" {
		lang = getenv("LANG")
	}
	name, _, ok := strings.Cut(lang, ".")
	if !ok || strings.Contains(lang[len(name)+1:], ".") || !slices.Contains(translatedLanguages, name) {
		return ""
	}
	return name
}

// translateHelp shows help in the user's language where kubectl's
// catalogs translate it: the short descriptions, and those paragraphs of
// the long ones that are kubectl's own texts. English help loads nothing.
func translateHelp(root *cobra.Command) {
	show := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if helpLanguage(os.Getenv) != "" {
			translateCommand(c)
		}
		show(c, args)
	})
}

// translateCommand translates c's texts and its subcommands' short
// descriptions, which its help lists.
func translateCommand(c *cobra.Command) {
	c.Short = i18n.T(c.Short)
	c.Long = translateLong(c.Long)
	for _, sub := range c.Commands() {
		sub.Short = i18n.T(sub.Short)
	}
}

// translateLong translates a long description paragraph by paragraph.
// kubectl's catalog keys are its source's raw strings: a newline, then
// each line indented by two tabs (its templates dedent them); a paragraph
// is looked up in that form and, translated, dedented again.
func translateLong(long string) string {
	paras := strings.Split(long, "\n\n")
	for i, p := range paras {
		key := "\n\t\t" + strings.ReplaceAll(p, "\n", "\n\t\t")
		if t := i18n.T(key); t != key {
			paras[i] = dedent(t)
		}
	}
	return strings.Join(paras, "\n\n")
}

// dedent trims a catalog text's surrounding blank lines and each line's
// leading tabs.
func dedent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}
