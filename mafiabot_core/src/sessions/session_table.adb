with Ada.Unchecked_Deallocation;
with Body_Log;

package body Session_Table is

   procedure Free is new Ada.Unchecked_Deallocation (Session, Session_Access);

   procedure Set_Capacity (Self : in out Table; Capacity : Positive) is
   begin
      Self.Capacity := Capacity;
   end Set_Capacity;

   procedure Evict_Least_Recent (Self : in out Table) is
      Oldest : constant String := Self.Recency.First_Element;
      Place  : Session_Maps.Cursor := Self.Sessions.Find (Oldest);
      Victim : Session_Access := Session_Maps.Element (Place).State;
   begin
      Body_Log.Info
        ("session table full (" & Self.Capacity'Image
         & " ): evicting the least recently used session after"
         & Victim.Turns'Image & " turns");
      Free (Victim);
      Self.Sessions.Delete (Place);
      Self.Recency.Delete_First;
   end Evict_Least_Recent;

   procedure Open
     (Self        : in out Table;
      Stub        : Organs.Fixture;
      Session_Key : String;
      Result      : out Session_Access)
   is
      Place : constant Session_Maps.Cursor := Self.Sessions.Find (Session_Key);
   begin
      if Session_Maps.Has_Element (Place) then
         declare
            Found : Entry_Record := Session_Maps.Element (Place);
         begin
            Self.Recency.Splice
              (Before => Recency_Lists.No_Element,
               Source => Self.Recency, Position => Found.Recent);
            Result := Found.State;
         end;
         return;
      end if;

      if Natural (Self.Sessions.Length) >= Self.Capacity then
         Evict_Least_Recent (Self);
      end if;
      Result := new Session'
        (Turns     => 0,
         Reservoir => Organs.Drive_Box.Fresh (Stub, Session_Key),
         Draws     => Organs.Celtic_Cross.Shuffled_For (Stub, Session_Key),
         Memory    => <>);
      Self.Recency.Append (Session_Key);
      Self.Sessions.Insert
        (Session_Key, (State => Result, Recent => Self.Recency.Last));
   end Open;

   function Count (Self : Table) return Natural is
     (Natural (Self.Sessions.Length));

end Session_Table;
