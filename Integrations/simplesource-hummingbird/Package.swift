// swift-tools-version: 6.2
// SimpleSourceHummingbird: serves a SimpleSource `WireService` over WebSockets with Hummingbird, the
// transport's part done once: each batch framed once per format and event loop and shared by every
// subscriber, back-pressure through the wire's sinks, pings, time limits per request state, limits and
// rates per address and per user, and refusals answered as HTTP before an upgrade. A package of its own,
// so that the root package keeps no dependencies.
import PackageDescription

let strictness: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
  name: "simplesource-hummingbird",
  platforms: [.macOS(.v14)],
  products: [
    .library(name: "SimpleSourceHummingbird", targets: ["SimpleSourceHummingbird"]),
    .executable(name: "notes-server", targets: ["notes-server"]),
  ],
  dependencies: [
    .package(name: "SimpleSource", path: "../.."),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
  ],
  targets: [
    .target(
      name: "SimpleSourceHummingbird",
      dependencies: [
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
        .product(name: "NIOWebSocket", package: "swift-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      resources: [.copy("Browser/wire-client.js")],
      swiftSettings: strictness
    ),
    // The README's example, whole: the file the README quotes.
    .executableTarget(
      name: "notes-server",
      dependencies: [
        "SimpleSourceHummingbird",
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "Hummingbird", package: "hummingbird"),
      ],
      swiftSettings: strictness
    ),
    .testTarget(
      name: "SimpleSourceHummingbirdTests",
      dependencies: [
        "SimpleSourceHummingbird",
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "SimpleSourceTesting", package: "SimpleSource"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      // The scripts Node runs against the browser client: read from the source tree, not built.
      exclude: ["BrowserClient"],
      swiftSettings: strictness
    ),
  ],
  swiftLanguageModes: [.v6]
)
