// The workbench's background work (sending to a tracker, following a class, a lesson served
// over HTTP, reading a snapshot) runs on Qt's global thread pool, and much of it waits on a
// server or a disk rather than computing.
#pragma once

namespace oomlab::ui {

// Gives Qt's global pool at least four threads, whatever the cores. Qt 6.4 scales images on
// that pool while the GUI thread waits for it; on a one-core machine the pool has one thread,
// so a request waiting there froze the window until its server answered. Call once, after
// the application object exists.
void letBackgroundWorkWait();

}  // namespace oomlab::ui
