// A tab widget as big as the page in view needs, not its largest page: a hidden page's minimum
// size is last computed when it was shown (another text size, other content), and a stale one
// could make the window taller than the screen.
#pragma once

class QTabWidget;

namespace oomlab::ui {

// From now on only the current page of `tabs` asks for room; the others are laid out when
// they are shown.
void sizeTabsToCurrentPage(QTabWidget* tabs);

}  // namespace oomlab::ui
