# The web console: its page built with npm and Vite, then bin/console embedding it.
#   docker build -f deployments/docker/console.Dockerfile --build-arg VERSION=0.1.0 .
FROM node:20-bookworm AS page
WORKDIR /src/console
COPY console/package.json console/package-lock.json ./
# npm 11, which the console's Vite needs (scripts/build.sh does the same).
RUN npm install -g --no-audit --no-fund npm@11 && npm ci --no-audit --no-fund
COPY services/gateway/openapi.json /src/services/gateway/openapi.json
COPY console/ ./
RUN npm run --silent build

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY console/go.mod console/go.sum console/
# console's go.mod replaces tori.dev/pkg with ../pkg, so the download needs it in place.
COPY pkg/ pkg/
RUN cd console && GOWORK=off go mod download
ARG VERSION=dev
ARG COMMIT=unknown
COPY console/ console/
COPY --from=page /src/console/dist console/dist
RUN cd console && CGO_ENABLED=0 GOWORK=off go build -trimpath \
      -ldflags "-X main.Version=${VERSION} -X main.Commit=${COMMIT}" -o /out/console ./cmd/console \
 && cd /src/pkg && CGO_ENABLED=0 go build -trimpath -o /out/healthprobe ./health/cmd/healthprobe

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/console /console
COPY --from=build /out/healthprobe /healthprobe
ENTRYPOINT ["/console"]
