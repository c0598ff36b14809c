package pods

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/remote"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/ctxsleep"
)

// errFileSpec is kubectl's refusal of a malformed [[namespace/]pod:]path.
var errFileSpec = errors.New("filespec must match the canonical format: [[namespace/]pod:]file/path")

type cpOptions struct {
	container  string
	noPreserve bool
	retries    int
}

// fileSpec is one side of cp: a local path, or a path in a pod.
type fileSpec struct {
	namespace, pod string
	file           string
}

// NewCpCommand returns "kdyn cp".
func NewCpCommand(f *cli.Factory) *cobra.Command {
	o := &cpOptions{}
	cmd := &cobra.Command{
		Use:   "cp <file-spec-src> <file-spec-dest>",
		Short: "Copy files and directories to and from containers",
		Long: `Copy files and directories between this machine and a container, as kubectl
cp does: a tar stream through exec ("tar cf -" in the container to copy
out, "tar -xmf -" to copy in), so the container needs a tar binary. A
remote file spec is [[namespace/]pod:]path. Copying out, paths that would
land outside the destination and symbolic links are skipped with a
warning. With --retries, a copy out whose stream breaks is resumed where it
stopped (the container's tar output piped through "tail -c+N").`,
		Example: `  # A local directory into a pod's /tmp
  kdyn cp ./config web-1:/tmp/config

  # A file out of a named container of a pod in another namespace
  kdyn cp prod/web-1:/var/log/app.log ./app.log -c app

  # Without keeping owners and permissions
  kdyn cp --no-preserve ./data web-1:/data`,
		RunE: func(cmd *cobra.Command, args []string) error { return runCp(cmd, f, o, args) },
	}
	cmd.Flags().StringVarP(&o.container, "container", "c", "", "Container name. If omitted, use the kubectl.kubernetes.io/default-container annotation for selecting the container to be attached or the first container in the pod will be chosen")
	cmd.Flags().BoolVar(&o.noPreserve, "no-preserve", false, "The copied file/directory's ownership and permissions will not be preserved in the container")
	cmd.Flags().IntVar(&o.retries, "retries", 0, "Set number of retries to complete a copy operation from a container. Specify 0 to disable or any negative value for infinite retrying. The default is 0 (no retry).")
	return cmd
}

func parseFileSpec(arg string) (fileSpec, error) {
	i := strings.Index(arg, ":")
	switch {
	case i == 0:
		return fileSpec{}, errFileSpec
	case i < 0:
		return fileSpec{file: arg}, nil
	}
	pod, file := arg[:i], arg[i+1:]
	pieces := strings.Split(pod, "/")
	switch len(pieces) {
	case 1:
		return fileSpec{pod: pieces[0], file: file}, nil
	case 2:
		return fileSpec{namespace: pieces[0], pod: pieces[1], file: file}, nil
	}
	return fileSpec{}, errFileSpec
}

func runCp(cmd *cobra.Command, f *cli.Factory, o *cpOptions, args []string) error {
	ctx := cmd.Context()
	if len(args) != 2 {
		return cli.Usagef("source and destination are required")
	}
	src, err := parseFileSpec(args[0])
	if err != nil {
		return err
	}
	dest, err := parseFileSpec(args[1])
	if err != nil {
		return err
	}
	if src.pod != "" && dest.pod != "" {
		return errors.New("one of src or dest must be a local file specification")
	}
	if src.file == "" || dest.file == "" {
		return errors.New("filepath can not be empty")
	}
	if src.pod == "" && dest.pod == "" {
		return errors.New("one of src or dest must be a remote file specification")
	}
	remoteSpec := src
	if dest.pod != "" {
		remoteSpec = dest
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if remoteSpec.namespace != "" {
		ns = remoteSpec.namespace
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	pod, err := dc.Resource(podsGVR).Namespace(ns).Get(ctx, remoteSpec.pod, metav1.GetOptions{})
	if err != nil {
		return err
	}
	// kubectl's note on a defaulted container goes with the tar's
	// stderr: the command's stderr copying in, its stdout copying out
	notes := cmd.ErrOrStderr()
	if dest.pod == "" {
		notes = cmd.OutOrStdout()
	}
	so := streamOptions{container: o.container}
	container, err := so.pickContainer(pod, notes)
	if err != nil {
		return err
	}
	run := func(ctx context.Context, command []string, s remote.Streams) error {
		return podStream(ctx, f, pod, "exec", url.Values{"container": {container}, "command": command}, s)
	}
	if dest.pod != "" {
		return o.copyToPod(ctx, run, src.file, dest.file, cmd)
	}
	return copyFromPod(ctx, run, src.file, dest.file, o.retries, cmd)
}

type runner func(ctx context.Context, command []string, s remote.Streams) error

// copyToPod sends a tar of the local src and extracts it in the container
// at dest (inside dest when dest is a directory there).
func (o *cpOptions) copyToPod(ctx context.Context, run runner, src, dest string, cmd *cobra.Command) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("%s doesn't exist in local filesystem", src)
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	isDir := run(tctx, []string{"test", "-d", dest}, remote.Streams{Stdout: io.Discard, Stderr: io.Discard})
	cancel()
	if isDir == nil {
		dest = path.Join(dest, filepath.Base(src))
	} else if errors.Is(isDir, context.DeadlineExceeded) {
		return isDir
	}
	// A local error (an unreadable file) ends the tar early; it is the
	// failure to report, not what the remote tar makes of the cut archive.
	pr, pw := io.Pipe()
	tarErr := make(chan error, 1)
	go func() {
		err := makeTar(src, path.Base(dest), pw)
		tarErr <- err
		pw.CloseWithError(err)
	}()
	command := []string{"tar", "-xmf", "-"}
	if o.noPreserve {
		command = []string{"tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-"}
	}
	if dir := path.Dir(dest); dir != "" {
		command = append(command, "-C", dir)
	}
	err := run(ctx, command, remote.Streams{Stdin: pr, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
	pr.CloseWithError(errRemoteEnded) // unblocks makeTar if it still writes
	if terr := <-tarErr; terr != nil && !errors.Is(terr, errRemoteEnded) {
		return terr
	}
	return err
}

// errRemoteEnded stops a local tar whose reader, the remote tar, has ended.
var errRemoteEnded = errors.New("the remote tar has ended")

// tarRecord is GNU tar's record size (20 blocks of 512 bytes).
const tarRecord = 20 * 512

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// makeTar writes src (a file or a directory tree) as a tar whose entries
// are named under name. The stream is padded to a whole tar record, as
// GNU tar writes it: a tar reading from a pipe reads whole records, and
// would otherwise wait for an end of input that a runtime may not pass
// on once the archive's end is sent.
func makeTar(src, name string, out io.Writer) error {
	w := &countingWriter{w: out}
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		entry := path.Join(name, filepath.ToSlash(rel))
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = entry
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if rem := w.n % tarRecord; rem != 0 {
		_, err = w.Write(make([]byte, tarRecord-rem))
	}
	return err
}

// copyFromPod runs "tar cf - src" in the container and extracts it under
// dest, keeping the entries inside dest; retries is --retries.
func copyFromPod(ctx context.Context, run runner, src, dest string, retries int, cmd *cobra.Command) error {
	t := &tarStream{ctx: ctx, run: run, src: src, retries: retries, notes: cmd.OutOrStdout()}
	t.start(0)
	defer func() { t.r.Close() }()
	// tar drops a leading "/" and the entries start with the path as given
	prefix := stripPathShortcuts(path.Clean(strings.TrimLeft(src, "/")))
	return untar(t, prefix, dest, cmd.ErrOrStderr())
}

// tarStream is the tar of src read from the container. With retries
// (negative: no limit) a stream that ends in an error is started again
// from the byte after the last one read, through "tail -c+N", as kubectl
// cp --retries does (with its lines on stdout).
type tarStream struct {
	ctx           context.Context
	run           runner
	src           string
	retries, done int
	read          uint64
	r             *io.PipeReader
	notes         io.Writer     // kubectl's lines, and the container tar's stderr, as kubectl has it
	pause         time.Duration // the last wait before a retry
}

// start runs the tar command from byte from (1-based; 0 is the start).
func (t *tarStream) start(from uint64) {
	command := []string{"tar", "cf", "-", t.src}
	if t.retries != 0 {
		quoted := strings.ReplaceAll(t.src, "'", `'\''`)
		command = []string{"sh", "-c", fmt.Sprintf("tar cf - '%s' | tail -c+%d", quoted, from)}
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(t.run(t.ctx, command, remote.Streams{Stdout: pw, Stderr: t.notes}))
	}()
	t.r = pr
}

// Read reads the tar; a stream that ends early (with an error, or with
// EOF before the archive ended, which its reader notices) is resumed while
// retries last, after a pause that doubles from 100 ms up to 5 s. A
// server's refusal (informer.IsPermanent: the pod or the right to exec is
// gone) is not retried.
func (t *tarStream) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.read += uint64(n)
	if err == nil || t.retries == 0 || t.ctx.Err() != nil || informer.IsPermanent(err) {
		return n, err
	}
	if t.retries > 0 && t.done >= t.retries {
		fmt.Fprintf(t.notes, "Dropping out copy after %d retries\n", t.done)
		return n, err
	}
	t.done++
	t.pause = min(max(2*t.pause, 100*time.Millisecond), 5*time.Second)
	if ctxsleep.Sleep(t.ctx, t.pause) != nil {
		return n, err
	}
	fmt.Fprintf(t.notes, "Resuming copy at %d bytes, retry %d/%d\n", t.read, t.done, t.retries)
	t.r.Close()
	t.start(t.read + 1)
	return n, nil
}

// stripPathShortcuts removes leading "../" and "./" and a lone "." or "..".
func stripPathShortcuts(p string) string {
	for {
		switch {
		case strings.HasPrefix(p, "../"):
			p = p[3:]
		case strings.HasPrefix(p, "./"):
			p = p[2:]
		case p == "." || p == "..":
			return ""
		default:
			return p
		}
	}
}

func untar(r io.Reader, prefix, dest string, errOut io.Writer) error {
	tr := tar.NewReader(r)
	destAbs, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !strings.HasPrefix(hdr.Name, prefix) {
			return errors.New("tar contents corrupted")
		}
		target := filepath.Join(dest, filepath.FromSlash(path.Clean("/"+hdr.Name[len(prefix):])))
		abs, err := filepath.Abs(target)
		if err != nil {
			return err
		}
		if abs != destAbs && !strings.HasPrefix(abs, destAbs+string(filepath.Separator)) {
			fmt.Fprintf(errOut, "warning: file %q is outside target destination, skipping\n", target)
			continue
		}
		mode := hdr.FileInfo().Mode()
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		switch {
		case hdr.FileInfo().IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case mode&os.ModeSymlink != 0:
			fmt.Fprintf(errOut, "warning: skipping symlink: %q -> %q\n", target, hdr.Linkname)
		case mode.IsRegular():
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
