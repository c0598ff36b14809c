package cli

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/dynamic"
)

// ValidateFlag is one command's --validate flag: the server-side field
// validation its writes ask for, as kubectl's.
type ValidateFlag struct {
	value string
}

// validateValues are the spellings --validate accepts, for completion
// (ParseBool's other spellings of true and false work too, as in kubectl).
var validateValues = []string{"strict", "warn", "ignore", "true", "false"}

// AddValidateFlag adds kubectl's --validate flag to cmd: "strict" by
// default and when given bare.
func AddValidateFlag(cmd *cobra.Command) *ValidateFlag {
	v := &ValidateFlag{}
	cmd.Flags().StringVar(&v.value, "validate", "strict", `How the server checks the fields sent: "strict" (or true) refuses an object with an unknown or duplicate field and names it; "warn" stores the object without such fields and prints the server's warning; "ignore" (or false) drops them silently (fieldValidation=Strict, Warn or Ignore on each write).`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
	_ = cmd.RegisterFlagCompletionFunc("validate", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range validateValues {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	return v
}

// Directive returns the fieldValidation value to send, or a usage error.
func (v *ValidateFlag) Directive() (string, error) { return parseValidate(v.value) }

// Client decorates c so that every write carries the directive.
func (v *ValidateFlag) Client(c dynamic.Interface) (dynamic.Interface, error) {
	d, err := v.Directive()
	if err != nil {
		return nil, err
	}
	return dynamic.WithFieldValidation(c, d), nil
}

// parseValidate maps a --validate value to a fieldValidation directive as
// kubectl does: a boolean (any strconv.ParseBool spelling) is strict or
// ignore; otherwise strict, warn or ignore.
func parseValidate(s string) (string, error) {
	if b, err := strconv.ParseBool(s); err == nil {
		if b {
			return metav1.FieldValidationStrict, nil
		}
		return metav1.FieldValidationIgnore, nil
	}
	switch s {
	case "strict":
		return metav1.FieldValidationStrict, nil
	case "warn":
		return metav1.FieldValidationWarn, nil
	case "ignore":
		return metav1.FieldValidationIgnore, nil
	}
	// kubectl's wording.
	return "", Usagef(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, s)
}
