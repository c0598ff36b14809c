// Package clientgodynamic runs client-go's own dynamic client tests against
// kdyn, to prove the drop-in claim: code written against
// k8s.io/client-go/dynamic moves to kdyn by changing its imports.
//
// The test in this package reads client-go's dynamic/client_test.go and
// dynamic/golden_test.go, with their testdata, from the module cache at the
// version bench/go.mod requires (nothing of client-go is copied into this
// repository), rewrites them with Port into a temporary package inside the
// bench module (so kdyn resolves through bench's replace directive), runs
// `go test` on it, and fails on any failing, skipped or missing test.
//
// Port changes what a user moving to kdyn changes, and nothing else:
//
//   - the import of k8s.io/client-go/dynamic becomes github.com/kdyn/kdyn/dynamic
//     and that of k8s.io/client-go/rest becomes github.com/kdyn/kdyn/rest,
//     under the same local names;
//   - client_test.go is an in-package test of client-go's dynamic package
//     (package dynamic, calling NewForConfig and naming Interface
//     unqualified); it gets a dot import of kdyn's dynamic, which is how
//     those identifiers come from kdyn in a file that used to live inside
//     client-go;
//   - with Options.CompressWatches, every rest.Config literal gets
//     `CompressWatches: true`, which is what a user who wants watches
//     gzip-compressed like client-go's writes. kdyn's default asks for
//     uncompressed watches (see kdyn's rest package documentation), and
//     client-go's golden watch request pins "Accept-Encoding: gzip".
//
// Every other import (apimachinery, client-go's rest/watch encoder and
// util/watchlist, which the tests use as a server and a checker) is left as
// it is.
package clientgodynamic

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"strconv"
)

// Import paths Port rewrites.
const (
	ClientGoDynamic = "k8s.io/client-go/dynamic"
	ClientGoREST    = "k8s.io/client-go/rest"
	KdynDynamic     = "github.com/kdyn/kdyn/dynamic"
	KdynREST        = "github.com/kdyn/kdyn/rest"
)

// Options choose the rewrites beyond the imports.
type Options struct {
	// CompressWatches adds `CompressWatches: true` to every rest.Config
	// literal: the client-go-compatible watch encoding.
	CompressWatches bool
}

// Report says what Port changed in one file.
type Report struct {
	// Imports are the rewritten import paths, "old -> new", in file order.
	Imports []string
	// DotImport is set when kdyn's dynamic package was dot-imported into an
	// in-package test of client-go's dynamic package.
	DotImport bool
	// ConfigLiterals counts the rest.Config literals given CompressWatches.
	ConfigLiterals int
}

// Port rewrites one of client-go's dynamic test files (src, named filename
// in messages) to run against kdyn, as the package documentation describes,
// and returns it gofmt-formatted. It fails when the file imports neither of
// client-go's dynamic and rest packages, so a changed upstream file is
// noticed rather than run unported.
func Port(filename string, src []byte, opts Options) ([]byte, Report, error) {
	var rep Report
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments)
	if err != nil {
		return nil, rep, err
	}
	restName := ""
	for _, spec := range f.Imports {
		old, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return nil, rep, fmt.Errorf("%s: import %s: %w", filename, spec.Path.Value, err)
		}
		var repl string
		switch old {
		case ClientGoDynamic:
			repl = KdynDynamic
		case ClientGoREST:
			repl = KdynREST
			restName = "rest"
			if spec.Name != nil {
				restName = spec.Name.Name
			}
		default:
			continue
		}
		spec.Path.Value = strconv.Quote(repl)
		rep.Imports = append(rep.Imports, old+" -> "+repl)
	}
	if len(rep.Imports) == 0 {
		return nil, rep, fmt.Errorf("%s: imports neither %s nor %s; the upstream file changed", filename, ClientGoDynamic, ClientGoREST)
	}
	if f.Name.Name == "dynamic" {
		if err := addDotImport(f, KdynDynamic); err != nil {
			return nil, rep, fmt.Errorf("%s: %w", filename, err)
		}
		rep.DotImport = true
	}
	if opts.CompressWatches && restName != "" {
		rep.ConfigLiterals = compressWatches(f, restName)
	}
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return nil, rep, fmt.Errorf("%s: print: %w", filename, err)
	}
	return out.Bytes(), rep, nil
}

// addDotImport adds `. "path"` to f's first import declaration.
func addDotImport(f *ast.File, path string) error {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		spec := &ast.ImportSpec{Name: ast.NewIdent("."), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(path)}}
		if !gd.Lparen.IsValid() {
			gd.Lparen = gd.Pos()
			gd.Rparen = gd.End()
		}
		gd.Specs = append(gd.Specs, spec)
		f.Imports = append(f.Imports, spec)
		return nil
	}
	return errors.New("no import declaration to add kdyn's dynamic package to")
}

// compressWatches adds `CompressWatches: true` to every restName.Config
// composite literal in f and returns how many it changed.
func compressWatches(f *ast.File, restName string) int {
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		lit, ok := node.(*ast.CompositeLit)
		if !ok {
			return true
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Config" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != restName {
			return true
		}
		lit.Elts = append(lit.Elts, &ast.KeyValueExpr{Key: ast.NewIdent("CompressWatches"), Value: ast.NewIdent("true")})
		n++
		return true
	})
	return n
}
