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
	args := []string{"build", "-trimpath", "-ldflags=-s", "-o", work + "/"}
	for _, p := range programs {
		args = append(args, "./cmd/"+p)
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the image's programs: %w%s", err, tail(out))
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
