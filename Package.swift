// swift-tools-version: 6.2
// SimpleSource: actor-based, sectioned data sources that deliver verified, UIKit-valid change batches.
import PackageDescription

let strictness: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

// Every layer, named beside the umbrella by the targets of this package that import it: SwiftPM's
// incremental builds rebuild a target when a module it depends on directly changes, but not always when
// one the umbrella re-exports does, and a client left with a stale copy of inlined code crashes.
let umbrella: [Target.Dependency] = [
  "SimpleSource", "SimpleSourceCore", "SimpleSourceWire", "SimpleSourceViews", "SimpleSourceScreens",
  "SimpleSourceUIKit",
]

let package = Package(
  name: "SimpleSource",
  // iOS 15 is the floor because `reconfigureItems`/`reconfigureRows` arrive there; see CONTRIBUTING.md.
  // Tools 6.2: the code uses `@concurrent` (SE-0461), which Swift 6.2 brings.
  platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
  products: [
    .library(name: "SimpleSource", targets: ["SimpleSource"]),
    .library(name: "SimpleSourceCore", targets: ["SimpleSourceCore"]),
    .library(name: "SimpleSourceWire", targets: ["SimpleSourceWire"]),
    .library(name: "SimpleSourceViews", targets: ["SimpleSourceViews"]),
    .library(name: "SimpleSourceTesting", targets: ["SimpleSourceTesting"]),
    .executable(name: "employees", targets: ["employees"]),
    .executable(name: "live-roster", targets: ["live-roster"]),
    .executable(name: "live-search", targets: ["live-search"]),
    .executable(name: "quickstart", targets: ["quickstart"]),
    .executable(name: "settings", targets: ["settings"]),
    .executable(name: "simplesource-bench", targets: ["simplesource-bench"]),
  ],
  targets: [
    // The layers, each a module so that the compiler holds them: nothing imports upward.
    // Model, diffing, runtime and derived sources: every hot, `@inlinable` path, in one module.
    .target(name: "SimpleSourceCore", swiftSettings: strictness),
    // Batches, snapshots and resets as versioned messages; the remote source that follows them.
    .target(name: "SimpleSourceWire", dependencies: ["SimpleSourceCore"], swiftSettings: strictness),
    // The platform-free view layer: list views, factories, the view data source and its state machine.
    .target(name: "SimpleSourceViews", dependencies: ["SimpleSourceCore"], swiftSettings: strictness),
    // Screens described in JSON (AEViewModel's view models).
    .target(name: "SimpleSourceScreens", dependencies: ["SimpleSourceCore"], swiftSettings: strictness),
    // The UIKit skin: compiled on Apple platforms only (every file is `#if canImport(UIKit)`).
    .target(
      name: "SimpleSourceUIKit",
      dependencies: ["SimpleSourceViews", "SimpleSourceScreens"],
      swiftSettings: strictness
    ),
    // The umbrella: `import SimpleSource` re-exports every layer.
    .target(
      name: "SimpleSource",
      dependencies: [
        "SimpleSourceCore", "SimpleSourceWire", "SimpleSourceViews", "SimpleSourceScreens", "SimpleSourceUIKit",
      ],
      swiftSettings: strictness
    ),
    .target(name: "SimpleSourceTesting", dependencies: umbrella, swiftSettings: strictness),
    .executableTarget(
      name: "employees",
      dependencies: umbrella + ["SimpleSourceTesting"],
      path: "Examples/employees",
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "live-roster",
      dependencies: umbrella + ["SimpleSourceTesting"],
      path: "Examples/live-roster",
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "live-search",
      dependencies: umbrella + ["SimpleSourceTesting"],
      path: "Examples/live-search",
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "quickstart",
      dependencies: umbrella + ["SimpleSourceTesting"],
      path: "Examples/quickstart",
      swiftSettings: strictness
    ),
    .executableTarget(
      name: "settings",
      dependencies: umbrella + ["SimpleSourceTesting"],
      path: "Examples/settings",
      resources: [.copy("settings.json")],
      swiftSettings: strictness
    ),
    // What the C allocator holds, for the benchmark that weighs the retained history (glibc only).
    .target(name: "BenchAllocator", path: "Benchmarks/BenchAllocator"),
    .executableTarget(
      name: "simplesource-bench",
      dependencies: umbrella + ["SimpleSourceTesting", "BenchAllocator"],
      path: "Benchmarks/simplesource-bench",
      swiftSettings: strictness
    ),
    .testTarget(
      name: "SimpleSourceTests",
      dependencies: umbrella + ["SimpleSourceTesting"],
      // Read through #filePath, so that the tests check the files in the repository, not a copy.
      exclude: ["Wire/Protocol/Fixtures"],
      swiftSettings: strictness
    ),
    .testTarget(
      name: "SimpleSourceTestingTests",
      dependencies: umbrella + ["SimpleSourceTesting"],
      swiftSettings: strictness
    ),
  ],
  swiftLanguageModes: [.v6]
)
