# The flotilla binary (hub, controllers and member agent) as a container image; `flotilla join`
# prints a Deployment of it as the member agent. Build: docker build -t REGISTRY/flotilla:TAG .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p flotilla

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/flotilla /usr/local/bin/flotilla
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/flotilla"]
