// SharedShelf: a thing nobody holds any more is handed out again, reset;
// one still held is never touched; the oldest comes back first; the shelf
// stays bounded. (Its uses: message_test.cc for the consumer's pulled
// messages, producer_protocol_test.cc for the producer's sends.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/common/shared_shelf.h"

namespace mqlab::shared_shelf_test {
namespace {

struct Thing {
  std::string text;
  int number = 0;
  int resets = 0;  // how often the shelf reset it: kept through reset, to see it ran
};

void reset_thing(Thing& thing) {
  const int resets = thing.resets;
  thing.text.clear();  // keeps its room
  thing.number = 0;
  thing.resets = resets + 1;
}

using Shelf = SharedShelf<Thing, 4, reset_thing>;

TEST(SharedShelf, AThingLetGoIsHandedOutAgainReset) {
  Shelf shelf;
  std::shared_ptr<Thing> first = shelf.take();
  EXPECT_EQ(first->resets, 0);
  first->text.assign(100, 'a');
  first->number = 7;
  const Thing* const address = first.get();
  const char* const room = first->text.data();
  first.reset();  // only the shelf holds it now
  const std::shared_ptr<Thing> again = shelf.take();
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(again->resets, 1);
  EXPECT_EQ(again->text, "");
  EXPECT_EQ(again->number, 0);
  again->text.assign(100, 'b');
  EXPECT_EQ(again->text.data(), room) << "reset_thing kept the text's room";
  EXPECT_EQ(shelf.kept(), 1u);
}

TEST(SharedShelf, AThingStillHeldIsNeverTouched) {
  Shelf shelf;
  const std::shared_ptr<Thing> held = shelf.take();
  held->text = "held";
  held->number = 1;
  const std::shared_ptr<Thing> other = shelf.take();
  EXPECT_NE(other.get(), held.get());
  EXPECT_EQ(other->resets, 0);
  EXPECT_EQ(held->text, "held");
  EXPECT_EQ(held->number, 1);
  EXPECT_EQ(held->resets, 0);
  EXPECT_EQ(shelf.kept(), 2u);
}

// Handed out a, b, c; b let go first, then a: the oldest free one (a) comes
// back first, then b, and only then a new one while c is held.
TEST(SharedShelf, TheOldestHandedOutComesBackFirst) {
  Shelf shelf;
  std::shared_ptr<Thing> a = shelf.take();
  std::shared_ptr<Thing> b = shelf.take();
  const std::shared_ptr<Thing> c = shelf.take();
  const Thing* const a_address = a.get();
  const Thing* const b_address = b.get();
  b.reset();
  a.reset();
  const std::shared_ptr<Thing> first = shelf.take();
  const std::shared_ptr<Thing> second = shelf.take();
  const std::shared_ptr<Thing> third = shelf.take();
  EXPECT_EQ(first.get(), a_address);
  EXPECT_EQ(second.get(), b_address);
  EXPECT_NE(third.get(), a_address);
  EXPECT_NE(third.get(), b_address);
  EXPECT_NE(third.get(), c.get());
  EXPECT_EQ(shelf.kept(), 4u);
}

TEST(SharedShelf, KeepsAtMostItsBoundWhileEverythingIsHeld) {
  Shelf shelf;
  std::vector<std::shared_ptr<Thing>> held;
  for (int i = 0; i < 3 * static_cast<int>(Shelf::kCapacity); ++i) {
    held.push_back(shelf.take());
    held.back()->number = i;
  }
  EXPECT_EQ(shelf.kept(), Shelf::kCapacity);
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(held[i]->number, static_cast<int>(i)) << "a held thing was handed out again";
    EXPECT_EQ(held[i]->resets, 0) << "a held thing was reset";
  }
  // Those that left the shelf are freed by their holders alone; the last
  // kCapacity handed out are its own, the oldest of them first to return.
  const Thing* const oldest_kept = held[held.size() - Shelf::kCapacity].get();
  held.clear();
  EXPECT_EQ(shelf.take().get(), oldest_kept);
}

}  // namespace
}  // namespace mqlab::shared_shelf_test
