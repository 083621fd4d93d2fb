// Memory a closed window freed, given back to the system.
#pragma once

namespace oomlab::ui {

// glibc keeps what is freed in its arenas (a reading thread's too) for the next allocation: a
// snapshot of a gigabyte would stay in the process after its window is gone. Asks it to return
// every whole free page, once the event loop has finished deleting what was closed.
void giveFreedMemoryBackSoon();

}  // namespace oomlab::ui
