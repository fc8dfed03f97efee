package swarm

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/topobench/topobench/internal/cluster"
)

// BuildImage builds cmd/hello and cmd/topobench from the checkout at root
// as static binaries (CGO_ENABLED=0) and imports them as image tag on
// cfg.Host's engine: a tar of /usr/local/bin/{hello,topobench}, entry
// point topobench, nothing else. No base image and no registry: a load
// generator and cmd/hello need no distribution. PlaceImage then puts it
// on the other nodes.
func BuildImage(ctx context.Context, cfg Config, root, tag string) error {
	if cfg.Docker == "" {
		cfg.Docker = "docker"
	}
	work, err := os.MkdirTemp("", "tbimg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	programs := []string{"hello", "topobench"}
	if err := buildPrograms(ctx, root, work, programs); err != nil {
		return err
	}

	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, dir := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755}); err != nil {
			return err
		}
	}
	for _, p := range programs {
		f, err := os.Open(filepath.Join(work, p))
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil {
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "usr/local/bin/" + p, Mode: 0o755, Size: fi.Size(), ModTime: fi.ModTime()})
		}
		if err == nil {
			_, err = io.Copy(tw, f)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("packing %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}

	s := &Swarm{cfg: cfg}
	if _, err := s.docker(ctx, cfg.Host, &tb, "import", "--change", `ENTRYPOINT ["/usr/local/bin/topobench"]`, "-", tag); err != nil {
		return fmt.Errorf("importing %s: %w", tag, err)
	}
	return nil
}

// buildPrograms builds cmd/NAME of the checkout at root for each of
// programs, static, into dir.
func buildPrograms(ctx context.Context, root, dir string, programs []string) error {
	args := []string{"build", "-trimpath", "-ldflags=-s", "-o", dir + "/"}
	for _, p := range programs {
		args = append(args, "./cmd/"+p)
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the image's programs: %w%s", err, tail(out))
	}
	return nil
}

// DefaultBase is the Debian image BuildServerImage starts from: the one
// compose/base-images.sh makes without Docker Hub.
const DefaultBase = "topobench/debian:bookworm"

// serverDockerfile installs nginx as compose/Dockerfile's nginx target
// does, with the same instruction, so that the engine's build cache
// shares the layer, and adds the checkout's programs.
const serverDockerfile = `ARG BASE
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx \
 && rm -rf /var/lib/apt/lists/*
COPY hello procd topobench /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/topobench"]
`

// BuildServerImage builds the image a sweep on the cluster runs on every
// node (compare -swarm): base, a Debian image (DefaultBase when empty),
// with Debian's nginx, and the static cmd/hello, cmd/procd and
// cmd/topobench of the checkout at root in /usr/local/bin, on cfg.Host's
// engine. It returns the image as repo:ID, ID the first 12 hex digits of
// the image's own: a build of the same checkout is the same image, and
// PlaceImage, which skips a node that has the tag, never leaves a node
// with an older build under it. apt-get needs the Debian mirror once; the
// layer is cached after.
func BuildServerImage(ctx context.Context, cfg Config, root, repo, base string) (string, error) {
	if cfg.Docker == "" {
		cfg.Docker = "docker"
	}
	if base == "" {
		base = DefaultBase
	}
	work, err := os.MkdirTemp("", "tbimg")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := buildPrograms(ctx, root, work, []string{"hello", "procd", "topobench"}); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "Dockerfile"), []byte(serverDockerfile), 0o644); err != nil {
		return "", err
	}
	s := &Swarm{cfg: cfg}
	if _, err := s.docker(ctx, cfg.Host, nil, "image", "inspect", "--format", "{{.Id}}", base); err != nil {
		return "", fmt.Errorf("%w: base image %s is not on the engine (compose/base-images.sh makes it): %v", cluster.ErrImage, base, err)
	}
	out, err := s.docker(ctx, cfg.Host, nil, "build", "--quiet", "--network", "host", "--build-arg", "BASE="+base, work)
	if err != nil {
		return "", fmt.Errorf("%w: building the image: %v", cluster.ErrImage, err)
	}
	id := strings.TrimPrefix(strings.TrimSpace(string(out)), "sha256:")
	if len(id) < 12 {
		return "", fmt.Errorf("%w: docker build printed no image ID: %q", cluster.ErrImage, out)
	}
	image := repo + ":" + id[:12]
	if _, err := s.docker(ctx, cfg.Host, nil, "tag", id, image); err != nil {
		return "", fmt.Errorf("%w: tagging %s: %v", cluster.ErrImage, image, err)
	}
	return image, nil
}
