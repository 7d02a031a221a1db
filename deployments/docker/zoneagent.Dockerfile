# The zone agent: the one image that is not distroless, because it runs customers' code in
# its sandbox and the zone's PgBouncer, and needs the host tools for both (the same packages
# scripts/ensure-services.sh installs on a machine): bubblewrap, pasta (passt), nftables,
# e2fsprogs and util-linux for the sandbox; PgBouncer, and pg_dump/pg_restore for managed
# databases' dumps; and the toolchains customers' builds use, never downloaded at build time:
# Node.js with npm, python3 with pip, and the Go this image was built with (ZONE_GO_ROOT). It runs as root in a privileged container (user namespaces, cgroups,
# loop devices, nftables); nothing else in the control plane does.
#   docker build -f deployments/docker/zoneagent.Dockerfile --build-arg VERSION=0.1.0 .
FROM golang:1.26-bookworm AS modules
WORKDIR /src
COPY . .
RUN find . -type f ! -name go.mod ! -name go.sum ! -name go.work ! -name go.work.sum -delete

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY --from=modules /src /src
RUN go mod download
ARG VERSION=dev
ARG COMMIT=unknown
COPY . .
RUN cd services/zoneagent && CGO_ENABLED=0 go build -trimpath \
      -ldflags "-X tori.dev/pkg/buildinfo.Version=${VERSION} -X tori.dev/pkg/buildinfo.Commit=${COMMIT}" \
      -o /out/zoneagent ./cmd/zoneagent \
 && cd /src/pkg && CGO_ENABLED=0 go build -trimpath -o /out/healthprobe ./health/cmd/healthprobe

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bubblewrap passt nftables e2fsprogs util-linux iproute2 tini pgbouncer postgresql-client-15 ca-certificates \
      nodejs npm python3 python3-pip \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin tori-dbhost
# tori-dbhost: the zone's database host, the agent's child (services/zoneagent/docs/database-host.md).
COPY --from=build /usr/local/go /usr/local/go
ENV ZONE_GO_ROOT=/usr/local/go
COPY --from=build /out/zoneagent /zoneagent
COPY --from=build /out/healthprobe /healthprobe
ENTRYPOINT ["/zoneagent"]
