// swift-tools-version: 6.2
// live-board: a live task board served by Hummingbird over HTTP and WebSocket, stored in SQLite with GRDB,
// streamed to browsers and Swift clients as SimpleSource wire messages through SimpleSourceHummingbird
// (Integrations/simplesource-hummingbird), which does the sockets' part. A package of its own, so that the
// root package keeps no dependencies. Its library, LiveBoard, is what the cluster on PostgreSQL
// (Examples/live-board-cluster) and the load lab (Benchmarks/live-board-load) build on.
import PackageDescription

let strictness: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
  name: "live-board",
  platforms: [.macOS(.v14)],
  products: [
    .library(name: "LiveBoard", targets: ["LiveBoard"]),
    .executable(name: "live-board", targets: ["live-board"]),
  ],
  dependencies: [
    .package(name: "SimpleSource", path: "../.."),
    .package(path: "../../Integrations/simplesource-hummingbird"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
  ],
  targets: [
    .target(
      name: "LiveBoard",
      dependencies: [
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "SimpleSourceHummingbird", package: "simplesource-hummingbird"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      resources: [.copy("Public")],
      swiftSettings: strictness
    ),
    .executableTarget(name: "live-board", dependencies: ["LiveBoard"], swiftSettings: strictness),
    .testTarget(
      name: "LiveBoardTests",
      dependencies: [
        "LiveBoard",
        .product(name: "SimpleSourceHummingbird", package: "simplesource-hummingbird"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      swiftSettings: strictness
    ),
  ],
  swiftLanguageModes: [.v6]
)
