// Every sequence of a state machine's events to a depth: the exploration its exhaustive tests share.

import Foundation
import Testing

/// A model world that a sequence of steps drives, checked after every step.
protocol ExplorableWorld {
  associatedtype Step: CustomStringConvertible
  /// The steps that may happen next.
  func steps() -> [Step]
  /// Performs `step`, throwing what it finds broken.
  mutating func perform(_ step: Step) throws
  /// Checks what must hold however the world goes on from here (for instance after draining it); the
  /// world is a copy, so this may change it.
  mutating func checkSettled() throws
}

/// What broke, and after which steps.
struct ExplorationFailure: Error, CustomStringConvertible {
  let description: String
}

/// Performs every sequence of steps of up to `depth` from `world`, checking each prefix.
/// - Returns: How many sequences were checked.
func exploreEverySequence<World: ExplorableWorld>(from world: World, depth: Int) throws -> Int {
  var sequences = 0
  func explore(_ world: World, trace: [World.Step]) throws {
    var settled = world
    do { try settled.checkSettled() } catch {
      throw ExplorationFailure(description: "after \(trace): \(error)")
    }
    sequences += 1
    guard trace.count < depth else { return }
    for step in world.steps() {
      var next = world
      do { try next.perform(step) } catch {
        throw ExplorationFailure(description: "after \(trace + [step]): \(error)")
      }
      try explore(next, trace: trace + [step])
    }
  }
  try explore(world, trace: [])
  return sequences
}

/// Explores every sequence from `world` to the depth the environment variable `depthVariable` gives
/// (`defaultDepth` without it), prints how many passed under `name`, and expects at least one.
func checkEverySequence<World: ExplorableWorld>(
  _ name: String, from world: World, depthVariable: String, defaultDepth: Int
) throws {
  let depth = ProcessInfo.processInfo.environment[depthVariable].flatMap(Int.init) ?? defaultDepth
  let sequences = try exploreEverySequence(from: world, depth: depth)
  print("\(name): \(sequences) sequences of up to \(depth) events, all passed")
  #expect(sequences > 0)
}
