# syntax=docker/dockerfile:1
# One Dockerfile for every bind-fn binary, for machines with a Docker engine
# (BuildKit, the default builder since Docker 23):
#
#   docker build .                                   fn-render (default)
#   docker build --build-arg TARGET=fn-validate .
#   docker build --build-arg TARGET=agent .          bind-fn-agent
#   docker build --build-arg TARGET=composition .    function-bind (Crossplane function)
#
# The project itself never runs this: there is no Docker engine where it builds
# and tests. `make images` builds the same images (same paths, entrypoints and
# user) as reproducible tarballs with hack/image, without an engine. Keep the
# two in step.
ARG GO_VERSION=1.26
ARG TARGET=fn-render

FROM golang:${GO_VERSION} AS build
ARG TARGET
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# A release stamps its version (the Makefile's VERSION and REVISION); empty: "dev".
ARG VERSION=
ARG REVISION=
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -eu; \
    case "$TARGET" in \
      fn-render)   pkg=./fn-render;   bin=fn-render ;; \
      fn-validate) pkg=./fn-validate; bin=fn-validate ;; \
      agent)       pkg=./agent;       bin=bind-fn-agent ;; \
      composition) pkg=./composition; bin=function-bind ;; \
      *) echo "unknown TARGET=$TARGET (want fn-render, fn-validate, agent or composition)" >&2; exit 1 ;; \
    esac; \
    mkdir -p /out; \
    v=git.unkin.net/unkin/bind-fn/internal/version; \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w${VERSION:+ -X $v.version=$VERSION}${REVISION:+ -X $v.revision=$REVISION}" -o "/out/$bin" "$pkg"

FROM gcr.io/distroless/static:nonroot AS image-fn-render
COPY --from=build /out/fn-render /fn-render
USER 65532:65532
ENTRYPOINT ["/fn-render"]

FROM gcr.io/distroless/static:nonroot AS image-fn-validate
COPY --from=build /out/fn-validate /fn-validate
USER 65532:65532
ENTRYPOINT ["/fn-validate"]

# The init container runs the default command, copying the agent into the
# shared emptyDir (internal/layout AgentBinDir); the named container runs it
# from there (AgentBin).
FROM gcr.io/distroless/static:nonroot AS image-agent
COPY --from=build /out/bind-fn-agent /bind-fn-agent
USER 65532:65532
ENTRYPOINT ["/bind-fn-agent"]
CMD ["copy-self", "/bind-fn/bin/bind-fn-agent"]

FROM gcr.io/distroless/static:nonroot AS image-composition
COPY --from=build /out/function-bind /function-bind
USER 65532:65532
ENTRYPOINT ["/function-bind"]

# BuildKit builds only the stages this one needs.
FROM image-${TARGET}
