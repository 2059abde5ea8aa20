// swift-tools-version: 6.2
// live-board-load: the live board's load lab. `board-load` drives a live-board server with WebSocket
// clients and HTTP writers; `nio-floor` is the least a SwiftNIO server pays to write the same messages.
// The scripts beside it run them (load.sh, fanout-load.sh on the cluster, memory-check.sh). A package of
// its own, so that the board's package keeps only the board.
import PackageDescription

let strictness: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
  name: "live-board-load",
  platforms: [.macOS(.v14)],
  products: [
    .executable(name: "board-load", targets: ["board-load"]),
    .executable(name: "nio-floor", targets: ["nio-floor"]),
  ],
  dependencies: [
    .package(name: "SimpleSource", path: "../.."),
    .package(path: "../../Examples/live-board"),
    .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
  ],
  targets: [
    .executableTarget(
      name: "board-load",
      dependencies: [
        .product(name: "LiveBoard", package: "live-board"),
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "nio-floor",
      dependencies: [
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      swiftSettings: strictness
    ),
  ],
  swiftLanguageModes: [.v6]
)
