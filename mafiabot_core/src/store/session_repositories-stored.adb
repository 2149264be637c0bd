with Body_Log;
with Organs.Morag.Excerpts;

package body Session_Repositories.Stored is

   procedure Open
     (Self            : in out Repository;
      Path            : String;
      Capacity        : Positive;
      Busy_Timeout_Ms : Positive;
      Full_Sync       : Boolean;
      Result          : out Session_Store.Outcome) is
   begin
      Self.Store.Open (Path, Capacity, Busy_Timeout_Ms, Full_Sync, Result);
   end Open;

   function Store_Of (Self : in out Repository)
     return not null access Session_Store.Store is
     (Self.Store'Unchecked_Access);

   overriding procedure Within_Turn
     (Self        : in out Repository;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Length      : Turn_Length;
      Work        : not null access procedure
                      (Session : in out Session_Table.Session;
                       Memory  : in out Organs.Morag.Memory'Class;
                       Result  : out Verdict);
      Result      : out Status)
   is
      Held   : Session_Table.Session;
      Memory : Organs.Morag.Excerpts.Excerpt_Memory;
      Stored : Session_Store.Outcome;
      Said   : Verdict;
   begin
      case Length is
         when Short => Self.Store.Begin_Turn
              (Chosen, Session_Key, Held, Memory, Stored);
         when Long =>
            Self.Store.Begin_Long_Turn
              (Chosen, Session_Key, Held, Memory, Stored);
      end case;
      if not Stored.Failed then
         begin
            Work (Held, Memory, Said);
         exception
            when others =>
               --  Not handled here: the lock is released now, not at this
               --  body's next turn, and the request loop's edge answers
               Self.Store.Abandon_Turn;
               raise;
         end;
         case Said is
            when Discard => Self.Store.Abandon_Turn;
            when Keep =>
               case Length is
                  when Short =>
                     Self.Store.Commit_Turn (Session_Key, Held, Memory, Stored);
                  when Long =>
                     Self.Store.Commit_Long_Turn
                       (Session_Key, Held, Memory, Stored);
               end case;
         end case;
      end if;
      if Stored.Failed then
         Body_Log.Error (Session_Store.Diagnostic (Stored));
      end if;
      Result := (Failed => Stored.Failed, Reason => Stored.Reason);
   end Within_Turn;

   overriding procedure Close (Self : in out Repository) is
   begin
      if Self.Store.Is_Open then
         Self.Store.Close;
      end if;
   end Close;

end Session_Repositories.Stored;
