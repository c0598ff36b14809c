package cli

import "github.com/spf13/pflag"

// AddOutputFlags adds -o (--output) and kubectl's --template to a command
// that prints the objects it wrote, both feeding *output: --template T
// alone means -o go-template=T, and with a template format given without
// "=" (-o go-template, jsonpath, ...) it is that format's template, as in
// kubectl. help documents -o.
func AddOutputFlags(fl *pflag.FlagSet, output *string, help string) {
	s := &outputState{out: output, o: *output}
	fl.VarP(&outputValue{s: s, template: false}, "output", "o", help)
	fl.Var(&outputValue{s: s, template: true}, "template", "Template string or path to template file to use when -o=go-template, -o=go-template-file. The template format is golang templates [http://golang.org/pkg/text/template/#pkg-overview].")
}

// outputState joins -o and --template into the output string.
type outputState struct {
	out         *string
	o, template string
}

func (s *outputState) update() { *s.out = joinTemplate(s.o, s.template) }

// outputValue is the pflag.Value of -o or of --template.
type outputValue struct {
	s        *outputState
	template bool
}

func (v *outputValue) String() string {
	if v.template {
		return v.s.template
	}
	return v.s.o
}

func (v *outputValue) Set(val string) error {
	if v.template {
		v.s.template = val
	} else {
		v.s.o = val
	}
	v.s.update()
	return nil
}

func (v *outputValue) Type() string { return "string" }
