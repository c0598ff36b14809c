package cli_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// podCluster is a whole cluster (controllers, scheduler, one KWOK node)
// with namespace ns holding pod p (containers app and side, label
// app=p), a Deployment web of two pods, and KWOK's kubelet set up so that
// p's logs are files in dir, every other pod's log is web.log, attach
// follows attach.log (run.log for pod r3; other pods have none), and exec
// runs commands in dir.
func podCluster(t *testing.T, ns string) (*testenv.Env, string) {
	t.Helper()
	env := testenv.New(t, testenv.Options{Controllers: true, Scheduler: true, Nodes: 1})
	dir := t.TempDir()
	files := map[string]string{
		"app.log":    "2026-12-05T10:00:00.000000000Z stdout F app line 1\n2026-12-05T10:00:01.000000000Z stdout F app line 2\n",
		"side.log":   "2026-12-05T10:00:02.000000000Z stderr F side line\n",
		"web.log":    "2026-12-05T10:00:03.000000000Z stdout F web line\n",
		"attach.log": "",
		"run.log":    "",
		"hello.txt":  "hello from the container\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kdyn(t, env, "create", "namespace", ns).must(t)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  containers:
  - {name: app, image: busybox}
  - {name: side, image: busybox}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: p}
spec:
  logs:
  - {containers: [app], logsFile: %[1]s/app.log}
  - {containers: [side], logsFile: %[1]s/side.log}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: %[2]s-web}
spec:
  selector: {matchNamespaces: [%[2]s]}
  logs: [{logsFile: %[1]s/web.log}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Attach
metadata: {name: p}
spec:
  attaches: [{logsFile: %[1]s/attach.log}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Attach
metadata: {name: r3}
spec:
  attaches: [{logsFile: %[1]s/run.log}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: %[2]s-exec}
spec:
  selector: {matchNamespaces: [%[2]s]}
  execs: [{local: {workDir: %[1]s}}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata: {name: %[2]s-pf}
spec:
  selector: {matchNamespaces: [%[2]s]}
  forwards: [{ports: [80], target: {address: 127.0.0.1, port: %[3]d}}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 80}]
`, dir, ns, echoServer(t))
	kdynAs(t, env, testenv.Admin, manifest, "apply", "-n", ns, "-f", "-").must(t)
	kdyn(t, env, "wait", "-n", ns, "pod/p", "--for=condition=Ready", "--timeout=60s").must(t)
	kdyn(t, env, "rollout", "status", "-n", ns, "deploy/web", "--timeout=60s").must(t)
	// KWOK learns of its kwok.x-k8s.io objects through its own watches:
	// wait until it serves what they configure. Exit 0 is not enough for
	// the logs: until KWOK has seen pod p's own Logs object, the
	// namespace's ClusterLogs answers for p too.
	for _, w := range []struct {
		args []string
		has  string
	}{
		{[]string{"logs", "p", "-c", "app"}, "app line 1"},
		{[]string{"logs", "deploy/web"}, "web line"},
		{[]string{"exec", "p", "-c", "app", "--", "true"}, ""},
	} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			r := kdyn(t, env, append([]string{"-n", ns}, w.args...)...)
			if r.code == 0 && strings.Contains(r.stdout, w.has) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("KWOK does not serve %v after 60 s: %s%s", w.args, r.stdout, r.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return env, dir
}

// expect checks a run's exit code, that stdout is want (when not "-") and
// that stderr holds each of errHas.
func (r result) expect(t *testing.T, code int, want string, errHas ...string) {
	t.Helper()
	if r.code != code || (want != "-" && r.stdout != want) {
		t.Errorf("exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, code, r.stdout, want, r.stderr)
	}
	for _, s := range errHas {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

// TestPodStreams: logs, exec and attach against pods that run on KWOK's
// node, through the API server's proxy to its kubelet API.
func TestPodStreams(t *testing.T) {
	ns := "streams"
	env, dir := podCluster(t, ns)
	k := func(args ...string) result { return kdyn(t, env, append([]string{"-n", ns}, args...)...) }

	t.Run("logs", func(t *testing.T) {
		k("logs", "p").expect(t, 0, "app line 1\napp line 2\n", `Defaulted container "app" out of: app, side`)
		k("logs", "p", "side").expect(t, 0, "side line\n")
		k("logs", "p", "-c", "side", "--timestamps").expect(t, 0, "2026-12-05T10:00:02.000000000Z side line\n")
		k("logs", "pod/p", "-c", "app", "--tail=1").expect(t, 0, "app line 2\n")
		k("logs", "p", "--all-containers", "--prefix").expect(t, 0,
			"[pod/p/app] app line 1\n[pod/p/app] app line 2\n[pod/p/side] side line\n")
		r := k("logs", "deploy/web")
		r.expect(t, 0, "web line\n", "Found 2 pods, using pod/web-")
		r = k("logs", "-l", "app=web", "--prefix")
		if r.code != 0 || strings.Count(r.stdout, "] web line\n") != 2 || strings.Count(r.stdout, "[pod/web-") != 2 {
			t.Errorf("logs -l: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		k("logs", "deploy/web", "--all-pods").expect(t, 0, "-")
		k("logs", "p", "-c", "nope").expect(t, 1, "", "error: container nope is not valid for pod p out of: app, side")
		k("logs", "nope").expect(t, 1, "", `error: error from server (NotFound): pods "nope" not found in namespace "streams"`)
		k("logs").expect(t, 1, "", "POD or TYPE/NAME is a required argument for the logs command")
		k("logs", "p", "--since=1h", "--since-time=2026-12-05T10:00:00Z").expect(t, 1, "", "at most one of `sinceTime` or `sinceSeconds` may be specified")
		k("logs", "cm/kube-root-ca.crt").expect(t, 1, "", "cannot get the logs from *v1.ConfigMap: selector for *v1.ConfigMap not implemented")

		// -f follows the file as it grows
		out, _ := startKdyn(t, env, "-n", ns, "logs", "-f", "p", "-c", "app")
		out.wait(t, "app line 2\n")
		appendFile(t, filepath.Join(dir, "app.log"), "2026-12-05T10:00:09.000000000Z stdout F app line 3\n")
		out.wait(t, "app line 3\n")
	})

	t.Run("exec", func(t *testing.T) {
		k("exec", "p", "--", "cat", "hello.txt").expect(t, 0, "hello from the container\n", `Defaulted container "app" out of: app, side`)
		k("exec", "p", "-c", "side", "--", "sh", "-c", "echo out; echo err >&2").expect(t, 0, "out\n", "err")
		r := kdynAs(t, env, testenv.Admin, "hello world", "-n", ns, "exec", "-i", "p", "-c", "app", "--", "head", "-c", "5")
		r.expect(t, 0, "hello")
		k("exec", "deploy/web", "--", "true").expect(t, 0, "")
		// KWOK reports a failed command as an internal error, without
		// the exit code a kubelet sends (remote's unit tests cover that).
		k("exec", "p", "-c", "app", "--", "sh", "-c", "exit 3").expect(t, 1, "", "exit status 3")
		k("exec", "-it", "p", "-c", "app", "--", "true").expect(t, 0, "", "Unable to use a TTY - input is not a terminal or the right kind of file")
		k("exec", "p", "date").expect(t, 1, "", "exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
		k("exec", "p", "-c", "nope", "--", "date").expect(t, 1, "", "container nope is not valid for pod p out of: app, side")
		k("exec", "nope", "--", "date").expect(t, 1, "", `pods "nope" not found`)
		k("exec", "cm/kube-root-ca.crt", "--", "date").expect(t, 1, "", "not implemented")
		k("exec", "p").expect(t, 1, "", "you must specify at least one command for the container")
		two := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
		kdynAs(t, env, testenv.Admin, two, "-n", ns, "exec", "-f", "-", "--", "echo").expect(t, 1, "", "cannot exec into multiple objects at a time")
		kdynAs(t, env, testenv.Nobody, "", "-n", ns, "exec", "p", "--", "date").expect(t, 1, "", "forbidden")
	})

	t.Run("attach", func(t *testing.T) {
		attach := func() (stdout, stderr *liveOutput) {
			stdout, stderr = startKdyn(t, env, "-n", ns, "attach", "p", "-c", "app")
			stderr.wait(t, "If you don't see a command prompt, try pressing enter.")
			return stdout, stderr
		}
		out, errOut := attach()
		// KWOK streams what is appended to the file after the attach
		for i := 0; !strings.Contains(out.String(), "attached line"); i++ {
			// until KWOK has seen p's Attach object (its own watch, as
			// with the Logs above) it refuses the attach ("error: …
			// no attaches found for container"): attach again
			if strings.Contains(errOut.String(), "error:") {
				out, errOut = attach()
			}
			appendFile(t, filepath.Join(dir, "attach.log"), fmt.Sprintf("2026-12-05T10:00:1%d.000000000Z stdout F attached line\n", i%10))
			if i > 100 {
				t.Fatalf("attach printed %q; on stderr %q", out.String(), errOut.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		k("attach", "p", "-c", "nope").expect(t, 1, "", "cannot attach to the container: container nope is not valid for pod p out of: app, side")
		k("attach").expect(t, 1, "", "at least 1 argument is required for attach")
	})

	t.Run("run", func(t *testing.T) {
		// KWOK has no attach for r1: kdyn prints the log so far, warns,
		// reads the log instead and waits for the pod to finish, which
		// the test reports as a kubelet would (exit code 3); --rm then
		// deletes the pod
		out, errOut, exit := startKdynExit(t, env, "-n", ns, "run", "r1", "--image=busybox", "--restart=Never", "--attach", "--rm")
		errOut.wait(t, "warning: couldn't attach to pod/r1, falling back to streaming logs")
		k("patch", "pod", "r1", "--subresource=status", "--type=merge", "-p", terminated("r1", 3)).must(t)
		if code := exit(); code != 3 || out.String() != "web line\npod \"r1\" deleted from streams namespace\n" ||
			!strings.Contains(errOut.String(), "pod streams/r1 terminated (Error)\nboom") {
			t.Errorf("run --attach --rm: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		k("wait", "pod/r1", "--for=delete", "--timeout=60s").must(t)

		// -i attaches (restart Always: no wait for the end); --rm deletes
		k("run", "r2", "-i", "--image=busybox", "--rm").expect(t, 0, "web line\npod \"r2\" deleted from streams namespace\n",
			"If you don't see a command prompt, try pressing enter.", "warning: couldn't attach to pod/r2")
		k("wait", "pod/r2", "--for=delete", "--timeout=60s").must(t)

		// r3 has an attach: what the container prints comes through
		out, errOut = startKdyn(t, env, "-n", ns, "run", "r3", "-i", "--image=busybox", "--restart=Never")
		errOut.wait(t, "If you don't see a command prompt, try pressing enter.")
		for i := 0; !strings.Contains(out.String(), "run line"); i++ {
			appendFile(t, filepath.Join(dir, "run.log"), fmt.Sprintf("2026-12-05T10:00:2%d.000000000Z stdout F run line\n", i%10))
			if i > 100 {
				t.Fatalf("run -i printed %q; stderr %q", out.String(), errOut.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		k("get", "pod", "r3", "-o", "jsonpath={.spec.containers[0].stdin} {.spec.containers[0].stdinOnce} {.spec.restartPolicy}").expect(t, 0, "true true Never")

		// an attached pod whose wait times out
		k("run", "r4", "--image=busybox", "--attach", "--pod-running-timeout=1ms").expect(t, 1, "", "timed out waiting for the condition")
	})

	t.Run("debug", func(t *testing.T) {
		// a copy of p with container dbg added, attached once dbg runs;
		// KWOK has no attach for it, so its log is printed instead
		r := k("debug", "p", "--copy-to=p-dbg", "--image=busybox", "-c", "dbg", "--attach")
		r.expect(t, 0, "-", "warning: couldn't attach to pod/p-dbg, falling back to streaming logs")
		if !strings.HasSuffix(r.stdout, "web line\n") {
			t.Errorf("debug --attach printed %q", r.stdout)
		}
	})

	t.Run("port-forward", func(t *testing.T) {
		out, _ := startKdyn(t, env, "-n", ns, "port-forward", "pod/p", ":80")
		forwarded(t, out, "80")
		out, _ = startKdyn(t, env, "-n", ns, "port-forward", "svc/web", "0:http")
		forwarded(t, out, "80")
		// a port that cannot be listened on is reported and the others
		// are forwarded; when none can be, port-forward fails
		busy, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		bp := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
		if l6, err := net.Listen("tcp6", "[::1]:"+bp); err == nil {
			defer l6.Close()
		}
		out, errOut := startKdyn(t, env, "-n", ns, "port-forward", "pod/p", bp+":80", ":80")
		forwarded(t, out, "80")
		errOut.wait(t, "Unable to listen on port "+bp+": Listeners failed to create with the following errors: [unable to create listener: Error listen tcp4 127.0.0.1:"+bp+": bind: address already in use")
		k("port-forward", "pod/p", bp+":80").expect(t, 1, "", "unable to listen on any of the requested ports: [{"+bp+" 80}]")
		k("port-forward", "p").expect(t, 1, "", "TYPE/NAME and list of ports are required for port-forward")
		k("port-forward", "p", "x").expect(t, 1, "", "Pod 'p' does not have a named port 'x'")
		k("port-forward", "svc/web", "9999").expect(t, 1, "", "Service web does not have a service port 9999")
		k("port-forward", "--address", "nowhere", "p", "80").expect(t, 1, "", "nowhere is not a valid IP")
	})

	t.Run("cp", func(t *testing.T) {
		local := t.TempDir()
		if err := os.MkdirAll(filepath.Join(local, "tree", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"tree/top.txt": "top\n", "tree/sub/deep.txt": "deep\n"} {
			if err := os.WriteFile(filepath.Join(local, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// into the container: its working directory is dir (KWOK runs
		// the command there), and into an existing directory the source
		// keeps its name
		// without -c, kubectl's note on the defaulted container goes to
		// stderr copying in (stdout copying out)
		k("cp", filepath.Join(local, "tree"), "p:copied").expect(t, 0, "", `Defaulted container "app" out of: app, side`)
		k("cp", filepath.Join(local, "tree"), "p:copied", "-c", "app").expect(t, 0, "")
		for name, want := range map[string]string{"copied/top.txt": "top\n", "copied/sub/deep.txt": "deep\n", "copied/tree/top.txt": "top\n"} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
				t.Errorf("%s in the container: %q, %v", name, got, err)
			}
		}
		// out of the container, from another namespace's view
		back := filepath.Join(t.TempDir(), "back")
		kdyn(t, env, "cp", ns+"/p:copied", back, "-c", "side").must(t)
		if got, err := os.ReadFile(filepath.Join(back, "sub", "deep.txt")); err != nil || string(got) != "deep\n" {
			t.Errorf("copied back: %q, %v", got, err)
		}
		out := filepath.Join(t.TempDir(), "hello.txt")
		k("cp", "p:hello.txt", out, "--retries=2").expect(t, 0, "Defaulted container \"app\" out of: app, side\n")
		if got, err := os.ReadFile(out); err != nil || string(got) != "hello from the container\n" {
			t.Errorf("cp --retries copied %q, %v", got, err)
		}
		k("cp", "a", "b").expect(t, 1, "", "one of src or dest must be a remote file specification")
		k("cp", "p:a", "p:b").expect(t, 1, "", "one of src or dest must be a local file specification")
		k("cp", ":a", "b").expect(t, 1, "", "filespec must match the canonical format: [[namespace/]pod:]file/path")
		k("cp", filepath.Join(local, "missing"), "p:x").expect(t, 1, "", "doesn't exist in local filesystem")
	})
}

// echoServer listens on 127.0.0.1 and answers each connection's first
// read with "echo:" and what it read; it returns the port.
func echoServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 256)
				n, _ := c.Read(buf)
				_, _ = c.Write(append([]byte("echo:"), buf[:n]...))
			}()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// forwarded reads the local address of the first "Forwarding from A -> R"
// line and checks that a connection to it reaches the echo server.
func forwarded(t *testing.T, out *liveOutput, remote string) {
	t.Helper()
	out.wait(t, " -> "+remote+"\n")
	line := strings.SplitN(out.String(), "\n", 2)[0]
	addr, _, ok := strings.Cut(strings.TrimPrefix(line, "Forwarding from "), " -> ")
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("port-forward printed %q", out.String())
	}
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	// KWOK keeps the stream open after the target closes (kubectl's
	// port-forward waits the same), so read the answer's length only
	got := make([]byte, len("echo:ping"))
	_, err = io.ReadFull(c, got)
	if err != nil || string(got) != "echo:ping" {
		t.Fatalf("through %s: %q, %v", addr, got, err)
	}
	out.wait(t, "Handling connection for "+strings.TrimPrefix(addr, "127.0.0.1:")+"\n")
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// terminated is a status patch that ends pod name's container with code,
// as a kubelet reports a failed container.
func terminated(name string, code int) string {
	return fmt.Sprintf(`{"status":{"phase":"Failed","containerStatuses":[{"name":%q,"image":"busybox","imageID":"","ready":false,"restartCount":0,`+
		`"state":{"terminated":{"exitCode":%d,"reason":"Error","message":"boom","startedAt":"2026-12-05T10:00:00Z","finishedAt":"2026-12-05T10:00:05Z"}}}]}}`, name, code)
}
