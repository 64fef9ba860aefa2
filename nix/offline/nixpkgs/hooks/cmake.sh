usesCmake=1
