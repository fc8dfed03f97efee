// Package compose is the container setup of topobench: docker-compose.yml
// (cmd/hello, nginx and the harness as three services), the Dockerfile its
// images build from, up.sh (make compose: install and start what is missing,
// then up), prepare.sh (that set-up, shared with smoke.sh), dc (the compose
// CLI this machine has, v2 or v1, on docker-compose.yml: the commands
// of docs/containers.md), lib.sh (the functions they share: which compose CLI, the
// engine's open-files limit), base-images.sh
// (local base images for engines without Docker Hub) and smoke.sh (make
// compose-smoke: a short sweep through docker compose, checked). docs/containers.md is
// the manual.
//
// There is no Go code here: the package's test loads the compose file with
// compose-go, without a Docker engine, and checks that everything it names
// exists and agrees with the rest of the repository — cmd/hello's flags, the
// nginx configuration the harness renders, the harness's flags and defaults,
// tuning/sysctl.conf and tuning/limits.conf.
package compose
