extension Array {
    /// Reverses the elements in place by moving them. The collection's own `reverse()` copies each
    /// element it swaps (a retain and a release of each of its parts), which the lists of events and
    /// actions taken apart on the engine loop paid per element.
    mutating func reverseByMoving() {
        withUnsafeMutableBufferPointer { elements in
            var (front, back) = (0, elements.count - 1)
            while front < back {
                elements.swapAt(front, back)
                front += 1
                back -= 1
            }
        }
    }
}
