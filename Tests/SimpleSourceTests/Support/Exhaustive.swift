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
  /// The world's whole state, when it can be compared: two worlds with equal keys take the same steps and
  /// pass or fail the same checks, so what follows one is checked once for each depth left. `nil` (the
  /// default) compares nothing, and every sequence is performed.
  var key: AnyHashable? { get }
}

extension ExplorableWorld {
  var key: AnyHashable? { nil }
}

extension ExplorableWorld where Self: Hashable {
  var key: AnyHashable? { AnyHashable(self) }
}

/// What broke, and after which steps.
struct ExplorationFailure: Error, CustomStringConvertible {
  let description: String
}

/// A world's key with the steps left after it.
private struct Visit: Hashable {
  let key: AnyHashable
  let left: Int
}

/// Performs every sequence of steps of up to `depth` from `world`, checking each prefix. A world with a
/// ``ExplorableWorld/key`` that was explored already with as many steps left is not explored again: its
/// sequences are the ones checked then (the count is exact, the strength the same).
/// - Returns: How many sequences were checked, and how many of them were performed (the rest were
///   known from an equal world).
func exploreEverySequence<World: ExplorableWorld>(
  from world: World, depth: Int
) throws -> (sequences: Int, performed: Int) {
  var known: [Visit: Int] = [:]
  var performed = 0
  func explore(_ world: World, trace: [World.Step]) throws -> Int {
    let visit = world.key.map { Visit(key: $0, left: depth - trace.count) }
    if let visit, let sequences = known[visit] { return sequences }
    var settled = world
    do { try settled.checkSettled() } catch {
      throw ExplorationFailure(description: "after \(trace): \(error)")
    }
    performed += 1
    var sequences = 1
    if trace.count < depth {
      for step in world.steps() {
        var next = world
        do { try next.perform(step) } catch {
          throw ExplorationFailure(description: "after \(trace + [step]): \(error)")
        }
        sequences += try explore(next, trace: trace + [step])
      }
    }
    if let visit { known[visit] = sequences }
    return sequences
  }
  let sequences = try explore(world, trace: [])
  return (sequences, performed)
}

/// Explores every sequence from `world` to the depth the environment variable `depthVariable` gives
/// (`defaultDepth` without it), prints how many passed under `name`, and expects at least one.
func checkEverySequence<World: ExplorableWorld>(
  _ name: String, from world: World, depthVariable: String, defaultDepth: Int
) throws {
  let depth = ProcessInfo.processInfo.environment[depthVariable].flatMap(Int.init) ?? defaultDepth
  let (sequences, performed) = try exploreEverySequence(from: world, depth: depth)
  let distinct = performed < sequences ? " (\(performed) distinct states performed)" : ""
  print("\(name): \(sequences) sequences of up to \(depth) events, all passed\(distinct)")
  #expect(sequences > 0)
}
