--  The files a session store test leaves behind

package Store_Files is

   procedure Remove (Path : String);
   --  The store at Path and its WAL journal files, as a run before may
   --  have left them (absent files are no failure)

end Store_Files;
