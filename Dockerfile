# mqsim in a container, for running swarm shards on a cluster (deploy/swarm-job.yaml):
#   docker build -t mqsim:dev .
#   docker run --rm mqsim:dev swarm --seeds 100
# The build stage compiles a static binary; the runtime image holds that binary alone and
# runs as an unprivileged user.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/mqsim ./cmd/mqsim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mqsim /usr/local/bin/mqsim
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/mqsim"]
CMD ["--help"]
