// swift-tools-version: 6.2
// live-board-cluster: the live board (Examples/live-board) kept in PostgreSQL with postgres-nio, so that
// several instances serve one board behind nginx, following one log of versions; with its fault checks.
// A package of its own: it builds on the board's library, LiveBoard.
import PackageDescription

let strictness: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
  name: "live-board-cluster",
  platforms: [.macOS(.v14)],
  products: [
    .executable(name: "board-instance", targets: ["board-instance"]),
    .executable(name: "cluster-check", targets: ["cluster-check"]),
  ],
  dependencies: [
    .package(name: "SimpleSource", path: "../.."),
    .package(path: "../live-board"),
    .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
  ],
  targets: [
    .target(
      name: "BoardCluster",
      dependencies: [
        .product(name: "LiveBoard", package: "live-board"),
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "board-instance",
      dependencies: ["BoardCluster", .product(name: "LiveBoard", package: "live-board")],
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "cluster-check",
      dependencies: [
        .product(name: "LiveBoard", package: "live-board"),
        .product(name: "SimpleSource", package: "SimpleSource"),
        .product(name: "SimpleSourceTesting", package: "SimpleSource"),
        .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictness
    ),
    .testTarget(name: "BoardClusterTests", dependencies: ["BoardCluster"], swiftSettings: strictness),
  ],
  swiftLanguageModes: [.v6]
)
